"""Anthropic Messages wire shapes for the fake upstream: validation, bodies, SSE events, errors.

The same `Reply` as the OpenAI side, translated: tool calls become `tool_use` blocks whose
`input` is the parsed arguments, usage becomes input/output tokens. Events are tagged like in
`openai_wire` ("open" / "piece" / "close") so the server can cut or gate the stream.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from tests.fakes import openai_wire
from tests.fakes.openai_wire import Event

if TYPE_CHECKING:
    from collections.abc import Mapping

    from tests.fakes.upstream import Reply

_ERRORS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def validate(headers: Mapping[str, str], body: Any) -> tuple[int, dict[str, Any]] | None:
    """The error the real API gives for this request, or None when it is acceptable.

    `headers` is looked up case-insensitively when it is the request's own (aiohttp's CIMultiDict).
    """
    if "x-api-key" not in headers:
        return 401, error_body(401, "x-api-key header is required")
    if "anthropic-version" not in headers:
        return 400, error_body(400, "anthropic-version: header is required")
    if not isinstance(body, dict):
        return 400, error_body(400, "There was an error parsing the body of your request.")
    for key in ("model", "max_tokens", "messages"):
        if key not in body:
            return 400, error_body(400, f"{key}: Field required")
    for i, message in enumerate(body["messages"]):
        role = message.get("role") if isinstance(message, dict) else None
        if role not in ("user", "assistant", "system"):  # Claude Code sends system turns
            return 400, error_body(
                400,
                f'messages.{i}.role: Unexpected role "{role}". The Messages API accepts '
                "'user', 'assistant' or 'system'.",
            )
    return None


def error_body(status: int, message: str | None = None) -> dict[str, Any]:
    kind = _ERRORS.get(status, "api_error" if status >= 500 else "invalid_request_error")
    message = message or f"Fake upstream error: HTTP {status}"
    return {"type": "error", "error": {"type": kind, "message": message}}


def _usage(reply: Reply) -> tuple[int, int]:
    u = openai_wire.usage(reply)
    return u.get("input_tokens", u.get("prompt_tokens", 0)), u.get(
        "output_tokens", u.get("completion_tokens", 0)
    )


def message(reply: Reply, model: str, rid: str) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = []
    if reply.chunks is not None or not reply.tool_calls:
        blocks.append({"type": "text", "text": "".join(openai_wire.pieces(reply))})
    for call in openai_wire.tool_calls(reply):
        fn = call["function"]
        args = json.loads(fn["arguments"] or "{}")
        blocks.append({"type": "tool_use", "id": call["id"], "name": fn["name"], "input": args})
    inp, out = _usage(reply)
    body = {
        "id": rid,
        "type": "message",
        "role": "assistant",
        "content": blocks,
        "model": model,
        "stop_reason": "tool_use" if reply.tool_calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": inp, "output_tokens": out},
    }
    return {**body, **reply.extra}


def stream_events(reply: Reply, model: str, rid: str) -> list[Event]:
    full = message(reply, model, rid)
    inp, out = _usage(reply)
    start = {
        **full,
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": inp, "output_tokens": 1},
    }
    events: list[Event] = [("open", sse("message_start", {"message": start}))]
    for i, block in enumerate(full["content"]):
        if block["type"] == "text":
            empty = {**block, "text": ""}
            deltas = [{"type": "text_delta", "text": t} for t in openai_wire.pieces(reply)]
        else:
            empty = {**block, "input": {}}
            parts = openai_wire.split(json.dumps(block["input"]))
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in parts]
        events.append(("open", sse("content_block_start", {"index": i, "content_block": empty})))
        if i == 0:
            events.append(("open", sse("ping", {})))
        events += [("piece", sse("content_block_delta", {"index": i, "delta": d})) for d in deltas]
        events.append(("close", sse("content_block_stop", {"index": i})))
    final = {"stop_reason": full["stop_reason"], "stop_sequence": None}
    events.append(
        ("close", sse("message_delta", {"delta": final, "usage": {"output_tokens": out}}))
    )
    events.append(("close", sse("message_stop", {})))
    return events


def sse(event: str, fields: dict[str, Any]) -> bytes:
    data = json.dumps({"type": event, **fields}, separators=(",", ":"))
    return f"event: {event}\ndata: {data}\n\n".encode()
