"""OpenAI Responses <-> Chat Completions, as pure functions over JSON dicts (SPEC GW-21).

    parse_responses_request  POST /v1/responses body -> checked dict (RequestError naming the field)
    responses_to_chat        Responses request       -> chat-completions request
    chat_to_response         chat.completion         -> Response object (responses_answer)
    ResponsesStream          chat.completion.chunk   -> Responses SSE events (responses_stream)

Stateless, as Codex uses it (`store: false`, the whole input each turn): `previous_response_id`,
`conversation`, `background` and `item_reference` need stored responses and are refused.
Function, custom (Codex's apply_patch), local_shell and namespace tools become chat functions
(`namespace__name`), from `tools` and from `additional_tools` input items alike; a custom tool's
freeform input travels as the string argument `input` and comes back as a `custom_tool_call`.
Tools OpenAI runs on its own servers (web_search, file_search, tool_search...) are left out: a
chat model cannot run them, and Codex declares web_search on every turn whether it is wanted or
not. A tool_choice naming one, or a history holding one's call, is a RequestError.
Reasoning items are dropped: their encrypted content is bound to the provider that wrote it.
"""

from __future__ import annotations

from typing import Any

from nerve.errors import RequestError
from nerve.gateway.dialects.responses_answer import (
    chat_name,
    chat_to_response,
    dump_json,
    request_tools,
    response_usage,
)
from nerve.gateway.dialects.responses_stream import ResponsesStream
from nerve.gateway.request import check_model, optional
from nerve.json_limits import loads

__all__ = [
    "ResponsesStream",
    "chat_to_response",
    "parse_responses_request",
    "response_usage",
    "responses_to_chat",
]

ROLES = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}
CALLS = ("function_call", "custom_tool_call", "local_shell_call")
OUTPUTS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")
STATELESS = "nerve keeps no responses: send the full input each turn with store: false"
_NUMBER = (int, float)
Message = dict[str, Any]


def parse_responses_request(raw: bytes) -> dict[str, Any]:
    """The body of POST /v1/responses, parsed and checked to the types nerve reads."""
    if not raw:
        raise RequestError("the request body is empty; send a JSON Responses request",
                           code="invalid_json")  # fmt: skip
    body = loads(raw)
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object", code="invalid_json")
    check_model(body.get("model"))
    for name in ("previous_response_id", "conversation"):
        if body.get(name) is not None:
            raise RequestError(f"'{name}' is not supported: {STATELESS}", param=name)
    if body.get("background") is True:
        raise RequestError(f"background responses are not supported: {STATELESS}",
                           param="background")  # fmt: skip
    items = body.get("input")
    if isinstance(items, list):
        _objects(items, "input")
    elif not isinstance(items, str):
        raise RequestError("'input' is required: a string or an array of input items",
                           param="input")  # fmt: skip
    for name in ("instructions", "user", "safety_identifier", "prompt_cache_key"):
        optional(body, name, str, "a string")
    for name in ("stream", "store", "parallel_tool_calls", "background"):
        optional(body, name, bool, "true or false")
    for name in ("max_output_tokens", "max_tool_calls"):
        value = optional(body, name, int, "a positive integer")
        if value is not None and value < 1:
            raise RequestError(f"'{name}' must be a positive integer, got {value}", param=name)
    optional(body, "top_logprobs", int, "an integer")
    optional(body, "temperature", _NUMBER, "a number")
    optional(body, "top_p", _NUMBER, "a number")
    optional(body, "metadata", dict, "an object")
    if (reasoning := optional(body, "reasoning", dict, "an object")) is not None:
        optional(reasoning, "effort", str, "a string", "reasoning.")
    if (text := optional(body, "text", dict, "an object")) is not None:
        fmt = optional(text, "format", dict, "an object", "text.")
        if fmt is not None and not isinstance(fmt.get("type"), str):
            raise RequestError("'text.format.type' must be a string", param="text.format.type")
    tools = body.get("tools")
    if tools is not None:
        if not isinstance(tools, list):
            raise RequestError("'tools' must be an array of objects", param="tools")
        _objects(tools, "tools")
    choice = body.get("tool_choice")
    if choice is not None and not isinstance(choice, str | dict):
        raise RequestError("'tool_choice' must be a string or an object", param="tool_choice")
    return body


def responses_to_chat(body: dict[str, Any]) -> dict[str, Any]:
    """A checked Responses request as a chat-completions request (same `model`)."""
    out: dict[str, Any] = {"model": body.get("model"), "messages": _messages(body)}
    tools = [t for param, tool in request_tools(body) for t in _tools(tool, param)]
    choice = _tool_choice(body.get("tool_choice"))
    if tools:  # chat upstreams refuse tool_choice and parallel_tool_calls without tools
        out["tools"] = tools
        if choice is not None:
            out["tool_choice"] = choice
        if isinstance(body.get("parallel_tool_calls"), bool):
            out["parallel_tool_calls"] = body["parallel_tool_calls"]
    if body.get("max_output_tokens") is not None:
        out["max_completion_tokens"] = body["max_output_tokens"]
    for name in ("temperature", "top_p"):
        if body.get(name) is not None:
            out[name] = body[name]
    if isinstance(effort := (body.get("reasoning") or {}).get("effort"), str):
        out["reasoning_effort"] = effort
    if (response_format := _response_format((body.get("text") or {}).get("format"))) is not None:
        out["response_format"] = response_format
    user = body.get("user") or body.get("safety_identifier")
    if isinstance(user, str) and user:
        out["user"] = user
    if body.get("stream"):
        out["stream"] = True
        out["stream_options"] = {"include_usage": True}
    return out


def _objects(value: list[Any], param: str) -> None:
    for k, item in enumerate(value):
        if not isinstance(item, dict):
            raise RequestError(f"'{param}[{k}]' must be an object", param=f"{param}[{k}]")
        if item.get("type") is not None and not isinstance(item["type"], str):
            raise RequestError(f"'{param}[{k}].type' must be a string", param=f"{param}[{k}].type")


# --- input items -> messages ------------------------------------------------------------------


def _messages(body: dict[str, Any]) -> list[Message]:
    messages: list[Message] = []
    instructions = body.get("instructions")
    if isinstance(instructions, str) and instructions:
        messages.append({"role": "system", "content": instructions})
    items = body.get("input")
    if isinstance(items, str):
        return [*messages, {"role": "user", "content": items}]
    for i, item in enumerate(items or []):
        param = f"input[{i}]"
        kind = item.get("type") or ("message" if "role" in item else None)
        if kind == "message":
            _add_message(messages, item, param)
        elif kind in CALLS:
            _add_call(messages, _call(item, kind, param))
        elif kind in OUTPUTS:
            messages.append(_tool_result(item, kind, param))
        elif kind == "item_reference":
            raise RequestError(f"an item_reference names a stored item; {STATELESS}",
                               param=param)  # fmt: skip
        elif kind not in ("reasoning", "additional_tools"):  # see the module docstring
            raise RequestError(
                f"input item type {kind!r} cannot be translated for a chat-completions model",
                param=f"{param}.type",
            )
    return messages


def _add_message(messages: list[Message], item: dict[str, Any], param: str) -> None:
    given = item.get("role")
    role = ROLES.get(given) if isinstance(given, str) else None
    if role is None:
        raise RequestError(f"'{param}.role' must be user, assistant, system or developer",
                           param=f"{param}.role")  # fmt: skip
    content = _content(item.get("content"), f"{param}.content", images=role == "user")
    last = messages[-1] if messages else None
    if role == "assistant" and last is not None and last["role"] == "assistant":
        # One assistant turn: its text and its tool calls, which tool results must follow.
        last["content"] = _joined(last.get("content"), content)
    else:
        messages.append({"role": role, "content": content})


def _add_call(messages: list[Message], call: dict[str, Any]) -> None:
    last = messages[-1] if messages else None
    if last is not None and last["role"] == "assistant":
        last.setdefault("tool_calls", []).append(call)
    else:
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})


def _call(item: dict[str, Any], kind: str, param: str) -> dict[str, Any]:
    call_id = _string(item, "call_id", param)
    if kind == "local_shell_call":
        action = item.get("action")
        if not isinstance(action, dict):
            raise RequestError("a local_shell_call needs an action", param=f"{param}.action")
        args = {"command": action.get("command"), "workdir": action.get("working_directory"),
                "timeout_ms": action.get("timeout_ms")}  # fmt: skip
        name, arguments = "local_shell", dump_json({k: v for k, v in args.items() if v is not None})
    elif kind == "custom_tool_call":
        name = chat_name(item.get("namespace"), _string(item, "name", param))
        arguments = dump_json({"input": _string(item, "input", param, empty=True)})
    else:
        name = chat_name(item.get("namespace"), _string(item, "name", param))
        if not isinstance(item.get("arguments"), str):
            raise RequestError("a function_call's arguments must be a JSON string",
                               param=f"{param}.arguments")  # fmt: skip
        arguments = item["arguments"]
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _tool_result(item: dict[str, Any], kind: str, param: str) -> Message:
    # A local_shell_call_output names its call by `id`, the others by `call_id`.
    key = "id" if kind == "local_shell_call_output" and "call_id" not in item else "call_id"
    call_id = _string(item, key, param)
    output = item.get("output")
    if not isinstance(output, str | list):
        raise RequestError(f"a {kind}'s output must be a string or an array of content parts",
                           param=f"{param}.output")  # fmt: skip
    return {"role": "tool", "tool_call_id": call_id,
            "content": _content(output, f"{param}.output", images=True)}  # fmt: skip


def _string(item: dict[str, Any], key: str, param: str, *, empty: bool = False) -> str:
    value = item.get(key)
    if not isinstance(value, str) or not (value or empty):
        kind = item.get("type") or "message"
        raise RequestError(f"a {kind} item needs a string {key}", param=f"{param}.{key}")
    return value


def _content(content: Any, param: str, *, images: bool) -> str | list[dict[str, Any]]:
    """Responses content (a string or parts) as chat content: one text part is a string."""
    if content is None or isinstance(content, str):
        return content or ""
    if not isinstance(content, list):
        raise RequestError(f"'{param}' must be a string or an array of content parts",
                           param=param)  # fmt: skip
    parts = [_part(part, f"{param}[{j}]", images) for j, part in enumerate(content)]
    if len(parts) == 1 and parts[0]["type"] == "text":
        return str(parts[0]["text"])
    return parts


def _part(part: Any, param: str, images: bool) -> dict[str, Any]:
    kind = part.get("type") if isinstance(part, dict) else None
    if kind in ("input_text", "output_text", "text", "refusal"):
        key = "refusal" if kind == "refusal" else "text"
        if not isinstance(part.get(key), str):
            raise RequestError(f"a {kind} part needs a string {key}", param=f"{param}.{key}")
        return {"type": "text", "text": part[key]}
    if kind == "input_image" and images:
        url = part.get("image_url")
        if isinstance(url, str) and url:
            image: dict[str, Any] = {"url": url}
            if part.get("detail") in ("auto", "low", "high"):
                image["detail"] = part["detail"]
            return {"type": "image_url", "image_url": image}
        raise RequestError(
            "an input_image needs an image_url (an https or data: URL): an OpenAI file_id "
            "cannot be read by another provider", param=f"{param}.image_url",
        )  # fmt: skip
    raise RequestError(f"content part type {kind!r} cannot be translated for a chat-completions "
                       "model", param=f"{param}.type")  # fmt: skip


def _joined(first: Any, second: str | list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    if not first:
        return second
    if not second:
        return first  # type: ignore[no-any-return]
    if isinstance(first, str) and isinstance(second, str):
        return f"{first}\n\n{second}"
    as_parts = [
        p if isinstance(p, list) else [{"type": "text", "text": p}] for p in (first, second)
    ]
    return as_parts[0] + as_parts[1]


# --- tools ------------------------------------------------------------------------------------

LOCAL_SHELL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "local_shell",
        "description": "Run a command on the user's machine and return its output.",
        "parameters": {
            "type": "object",
            "properties": {
                "command": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "The program and its arguments, one per item.",
                },
                "workdir": {"type": "string", "description": "The directory to run it in."},
                "timeout_ms": {"type": "integer", "description": "How long it may run."},
            },
            "required": ["command"],
        },
    },
}


def _tools(tool: Any, param: str) -> list[dict[str, Any]]:
    """A Responses tool as chat function tools: a namespace gives one per tool it holds."""
    kind = tool.get("type") if isinstance(tool, dict) else None
    if kind == "local_shell":
        return [LOCAL_SHELL]
    if kind == "namespace":
        inner = tool.get("tools")
        if not isinstance(inner, list):
            raise RequestError("a namespace tool needs a tools array", param=f"{param}.tools")
        namespace = _string(tool, "name", param)
        tools = [_tool(t, f"{param}.tools[{j}]", namespace) for j, t in enumerate(inner)]
    else:
        tools = [_tool(tool, param, None)]
    return [t for t in tools if t is not None]


def _tool(tool: Any, param: str, namespace: str | None) -> dict[str, Any] | None:
    """A function or custom tool as a chat function; None for a hosted tool (left out)."""
    kind = tool.get("type") if isinstance(tool, dict) else None
    if not isinstance(kind, str):
        raise RequestError(f"'{param}' must be a tool: an object with a string type",
                           param=f"{param}.type")  # fmt: skip
    if kind not in ("function", "custom"):
        return None
    function: dict[str, Any] = {"name": chat_name(namespace, _string(tool, "name", param))}
    if isinstance(tool.get("description"), str) and tool["description"]:
        function["description"] = tool["description"]
    if kind == "custom":
        function["parameters"] = _custom_parameters(tool.get("format"))
    else:
        if tool.get("parameters") is not None:
            function["parameters"] = tool["parameters"]
        if isinstance(tool.get("strict"), bool):
            function["strict"] = tool["strict"]
    return {"type": "function", "function": function}


def _custom_parameters(fmt: Any) -> dict[str, Any]:
    """A freeform tool as one string argument; its grammar, if any, tells the model the shape."""
    hint = "The tool's whole input, as plain text."
    if isinstance(fmt, dict) and fmt.get("type") == "grammar" and fmt.get("definition"):
        hint = (f"The tool's whole input, as plain text matching this {fmt.get('syntax', '')} "
                f"grammar:\n{fmt['definition']}")  # fmt: skip
    return {"type": "object", "properties": {"input": {"type": "string", "description": hint}},
            "required": ["input"], "additionalProperties": False}  # fmt: skip


def _tool_choice(choice: Any) -> Any:
    if choice is None or choice in ("auto", "none", "required"):
        return choice
    if (
        isinstance(choice, dict)
        and choice.get("type") in ("function", "custom")
        and isinstance(choice.get("name"), str)
    ):
        name = chat_name(choice.get("namespace"), choice["name"])
        return {"type": "function", "function": {"name": name}}
    raise RequestError('tool_choice must be "auto", "none", "required" or a function or custom '
                       "tool by name to be translated for a chat-completions model",
                       param="tool_choice")  # fmt: skip


def _response_format(fmt: Any) -> dict[str, Any] | None:
    if not isinstance(fmt, dict) or fmt.get("type") == "text":
        return None
    if fmt.get("type") == "json_object":
        return {"type": "json_object"}
    if fmt.get("type") == "json_schema":
        schema = {k: fmt[k] for k in ("name", "schema", "description", "strict") if k in fmt}
        return {"type": "json_schema", "json_schema": schema}
    raise RequestError("text.format must be text, json_object or json_schema",
                       param="text.format.type")  # fmt: skip
