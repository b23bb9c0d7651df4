"""Validation of an incoming chat request: bad input is a 400 naming the field, never a crash.

Only what nerve itself reads is checked, each to the type it is read as: `model` (routing, and
the x-nerve-model header), `messages` (the router; roles, content, tool calls and tool results
in the Anthropic translation), `stream` and `stream_options.include_usage`, `max_tokens` and
`max_completion_tokens` (admission's reservation), `user` (stats, key users), and what the
Anthropic translation reads: `n`, `stop`, `tools`, `parallel_tool_calls`, `temperature`,
`top_p`. Every other field passes through untouched, so a provider sees what the client sent;
the body as a whole is held to json_limits (depth, numbers).
"""

from __future__ import annotations

from typing import Any

from nerve.errors import RequestError
from nerve.json_limits import check_json, loads

__all__ = [
    "MAX_MODEL_CHARS",
    "ROLES",
    "check_model",
    "optional",
    "parse_chat_request",
    "validate_chat_request",
]

ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
MAX_MODEL_CHARS = 256  # the longest real ids (OpenRouter, Bedrock, HF repos) are under 100
_NUMBER = (int, float)


def parse_chat_request(raw: bytes) -> dict[str, Any]:
    """The body of POST /v1/chat/completions, parsed and checked."""
    if not raw:
        raise RequestError(
            "the request body is empty; send a JSON chat request", code="invalid_json"
        )
    body = loads(raw)
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object", code="invalid_json")
    _check_fields(body)
    return body


def validate_chat_request(body: dict[str, Any]) -> None:
    """Check a chat body another reader parsed (FastAPI, MCP, in-process callers): the fields,
    and the JSON limits that reader does not keep."""
    check_json(body)
    _check_fields(body)


def _check_fields(body: dict[str, Any]) -> None:
    check_model(body.get("model"))
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestError("'messages' is required and must be a non-empty array", param="messages")
    for i, message in enumerate(messages):
        _check_message(message, f"messages[{i}]")
    optional(body, "stream", bool, "true or false")
    options = optional(body, "stream_options", dict, "an object")
    if options is not None:
        optional(options, "include_usage", bool, "true or false", "stream_options.")
    for name in ("max_tokens", "max_completion_tokens", "n"):
        value = optional(body, name, int, "a positive integer")
        if value is not None and value < 1:
            raise RequestError(f"'{name}' must be a positive integer, got {value}", param=name)
    optional(body, "user", str, "a string")
    optional(body, "parallel_tool_calls", bool, "true or false")
    optional(body, "temperature", _NUMBER, "a number")
    optional(body, "top_p", _NUMBER, "a number")
    stop = body.get("stop")
    if stop is not None and not isinstance(stop, str) and not _list_of(stop, str):
        raise RequestError("'stop' must be a string or an array of strings", param="stop")
    _check_objects(body.get("tools"), "tools")


def check_model(model: Any) -> None:
    if not isinstance(model, str) or not model.strip():
        raise RequestError(
            "'model' is required and must be a string: auto, a route name or provider/model",
            param="model",
        )
    # It is shown in the x-nerve-model header and in logs: no control, format or separator
    # characters (CR/LF, NUL, DEL, C1, U+2028, bidi overrides), which a header cannot carry.
    if len(model) > MAX_MODEL_CHARS or not model.isprintable():
        raise RequestError(
            f"'model' must be at most {MAX_MODEL_CHARS} printable characters (letters, digits, "
            "spaces and punctuation; no control characters)",
            param="model",
        )


def _check_message(message: Any, where: str) -> None:
    if not isinstance(message, dict):
        raise RequestError(f"'{where}' must be an object", param=where)
    role = message.get("role")
    if not isinstance(role, str) or role not in ROLES:
        raise RequestError(
            f"'{where}.role' must be one of {', '.join(sorted(ROLES))}, got {_show(role)}",
            param=f"{where}.role",
        )
    content = message.get("content")
    if isinstance(content, list):
        _check_objects(content, f"{where}.content")
    elif content is not None and not isinstance(content, str):
        raise RequestError(
            f"'{where}.content' must be a string, an array of parts or null",
            param=f"{where}.content",
        )
    _check_objects(message.get("tool_calls"), f"{where}.tool_calls")
    optional(message, "tool_call_id", str, "a string", f"{where}.")


def optional(
    body: dict[str, Any], name: str, kind: type | tuple[type, ...], what: str, prefix: str = ""
) -> Any:
    """`body[name]` if it is absent, null or of `kind` (never a bool for a number), else 400."""
    value = body.get(name)
    if value is None or (isinstance(value, kind) and (kind is bool or type(value) is not bool)):
        return value
    raise RequestError(f"'{prefix}{name}' must be {what}, got {_show(value)}", param=prefix + name)


def _check_objects(value: Any, param: str) -> None:
    """Null, or an array of objects (tools, tool calls, content parts)."""
    if value is None:
        return
    if not isinstance(value, list):
        raise RequestError(f"'{param}' must be an array of objects", param=param)
    for j, item in enumerate(value):
        if not isinstance(item, dict):
            raise RequestError(f"'{param}[{j}]' must be an object", param=f"{param}[{j}]")


def _list_of(value: Any, kind: type) -> bool:
    return isinstance(value, list) and all(isinstance(item, kind) for item in value)


def _show(value: Any) -> str:
    """A client's value for an error message: its repr, cut short."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
