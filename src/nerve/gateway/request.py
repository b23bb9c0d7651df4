"""Validation of an incoming chat request: bad input is a 400 naming the field, never a crash.

Only what nerve itself relies on is checked; every other field passes through untouched so a
provider sees exactly what the client sent.
"""

from __future__ import annotations

from typing import Any

import orjson

from nerve.errors import RequestError

__all__ = ["parse_chat_request", "validate_chat_request"]

ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})


def parse_chat_request(raw: bytes) -> dict[str, Any]:
    if not raw:
        raise RequestError(
            "the request body is empty; send a JSON chat request", code="invalid_json"
        )
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        raise RequestError(
            f"the request body is not valid JSON: {e}", code="invalid_json"
        ) from None
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object", code="invalid_json")
    validate_chat_request(body)
    return body


def validate_chat_request(body: dict[str, Any]) -> None:
    model = body.get("model")
    if not isinstance(model, str) or not model.strip():
        raise RequestError(
            "'model' is required and must be a string: auto, a route name or provider/model",
            param="model",
        )
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestError("'messages' is required and must be a non-empty array", param="messages")
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise RequestError(f"'messages[{i}]' must be an object", param=f"messages[{i}]")
        role = message.get("role")
        if role not in ROLES:
            raise RequestError(
                f"'messages[{i}].role' must be one of {', '.join(sorted(ROLES))}, got {role!r}",
                param=f"messages[{i}].role",
            )
        content = message.get("content")
        if content is not None and not isinstance(content, str | list):
            raise RequestError(
                f"'messages[{i}].content' must be a string, an array of parts or null",
                param=f"messages[{i}].content",
            )
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise RequestError("'stream' must be true or false", param="stream")
    options = body.get("stream_options")
    if options is not None and not isinstance(options, dict):
        raise RequestError("'stream_options' must be an object", param="stream_options")
