"""OpenAI Chat Completions wire shapes for the fake upstream: bodies, SSE chunks, errors.

Pure functions from a `Reply` to bytes/dicts; `upstream.py` owns HTTP. Stream events are tagged
so the server can cut or gate a stream at content boundaries:
"open" (framing before content), "piece" (one content or argument delta), "close" (framing after).
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.fakes.upstream import Reply

Event = tuple[str, bytes]
DEFAULT_USAGE = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}

# status -> (error.type, error.code) as the real API sends them
_ERRORS: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
}


def split(text: str, parts: int = 3) -> list[str]:
    """`text` in about `parts` pieces (at least two when it has two characters)."""
    if not text:
        return []
    size = -(-len(text) // parts)
    return [text[i : i + size] for i in range(0, len(text), size)]


def pieces(reply: Reply) -> list[str]:
    """The text pieces; with tool calls the text is left out unless `chunks` is given."""
    if reply.chunks is not None:
        return list(reply.chunks)
    return [] if reply.tool_calls else split(reply.text)


def tool_calls(reply: Reply) -> list[dict[str, Any]]:
    """`Reply.tool_calls` completed to the full shape: id, type, string arguments."""
    calls = []
    for i, call in enumerate(reply.tool_calls or []):
        fn = dict(call.get("function", {}))
        args = fn.get("arguments", "{}")
        fn["arguments"] = args if isinstance(args, str) else json.dumps(args)
        calls.append(
            {**call, "id": call.get("id") or f"call_fake{i}", "type": "function", "function": fn}
        )
    return calls


def usage(reply: Reply) -> dict[str, int]:
    return dict(reply.usage or DEFAULT_USAGE)


def validate(body: Any) -> tuple[int, dict[str, Any]] | None:
    """The 400 the real API gives for this body, or None when it is acceptable."""
    if not isinstance(body, dict):
        return 400, error_body(400, "We could not parse the JSON body of your request.")
    if not body.get("model"):
        return 400, error_body(400, "you must provide a model parameter")
    if not isinstance(body.get("messages"), list):
        message = "Missing required parameter: 'messages'."
        return 400, error_body(400, message, param="messages", code="missing_required_parameter")
    return None


def error_body(
    status: int, message: str | None = None, *, param: str | None = None, code: str | None = None
) -> dict[str, Any]:
    kind, default_code = _ERRORS.get(
        status, ("server_error" if status >= 500 else "invalid_request_error", None)
    )
    message = message or f"Fake upstream error: HTTP {status}"
    return {
        "error": {"message": message, "type": kind, "param": param, "code": code or default_code}
    }


def completion(reply: Reply, model: str, rid: str) -> dict[str, Any]:
    calls = tool_calls(reply)
    content = "".join(pieces(reply)) if reply.chunks is not None or not calls else None
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
    if calls:
        message["tool_calls"] = calls
    choice = {
        "index": 0,
        "message": {**message, **reply.extra},
        "logprobs": None,
        "finish_reason": "tool_calls" if calls else "stop",
    }
    return {
        "id": rid,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [choice],
        "usage": usage(reply),
        "system_fingerprint": None,
    }


def stream_events(reply: Reply, model: str, rid: str, *, include_usage: bool) -> list[Event]:
    created = int(time.time())

    def chunk(choices: list[dict[str, Any]], usage_: dict[str, int] | None = None) -> bytes:
        body: dict[str, Any] = {
            "id": rid,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "system_fingerprint": None,
            "choices": choices,
        }
        if include_usage:  # every chunk carries "usage": null, the last one the totals
            body["usage"] = usage_
        return sse(body)

    def delta(fields: dict[str, Any], finish: str | None = None) -> bytes:
        return chunk([{"index": 0, "delta": fields, "logprobs": None, "finish_reason": finish}])

    calls = tool_calls(reply)
    texts = pieces(reply)
    first = {"role": "assistant", "content": "" if texts or not calls else None, "refusal": None}
    events: list[Event] = [("open", delta({**first, **reply.extra}))]
    events += [("piece", delta({"content": text})) for text in texts]
    for i, call in enumerate(calls):
        fn = {"name": call["function"]["name"], "arguments": ""}
        head = {"index": i, "id": call["id"], "type": "function", "function": fn}
        events.append(("open", delta({"tool_calls": [head]})))
        for part in split(call["function"]["arguments"]):
            tail = {"index": i, "function": {"arguments": part}}
            events.append(("piece", delta({"tool_calls": [tail]})))
    events.append(("close", delta({}, "tool_calls" if calls else "stop")))
    if include_usage:
        events.append(("close", chunk([], usage(reply))))
    events.append(("close", b"data: [DONE]\n\n"))
    return events


def models(ids: list[str], owner: str) -> dict[str, Any]:
    data = [{"id": m, "object": "model", "created": 0, "owned_by": owner} for m in ids]
    return {"object": "list", "data": data}


def sse(body: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(body, separators=(",", ":")).encode() + b"\n\n"
