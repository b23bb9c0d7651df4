"""What the response cache keeps, as bytes, and the answers it never keeps (tool calls).

An entry is one answer as its client got it: the JSON body, or every SSE event of a stream
(nerve's keep-alives left out), with the x-nerve-* headers and the usage of the call that made
it. Encoded (version 1):

    b"NVC1" | SHA-256 of the rest (32 bytes) | meta length (4 bytes, big-endian) | meta | payload

`meta` is JSON: the cache key the entry was written under, its kind ("json" or "sse"), the
headers, the usage, when it was made and when it expires, and the payload's length. `decode`
refuses (BadEntry) anything else: another version, a checksum or length that does not match
(a truncated or garbled value), another key's entry, an expired or oversized one; the caller
treats that as a miss, and the answer of that miss overwrites it.

Tool calls: an answer that asks the client to run a tool depends on the world the client lives
in, and the guard judges each such call afresh; it is never kept. `calls_tools` reads a whole
answer, `frame_calls_tools` one stream frame as the upstream sent it (before the guard), each
only when a cheap byte test says a tool call could be there; what cannot be read counts as a
tool call (not kept).
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from typing import Any, Literal

import orjson

from nerve.gateway.dialects.base import Wire
from nerve.gateway.guard import sse
from nerve.gateway.stats import Usage

__all__ = ["MAGIC", "BadEntry", "Entry", "Kind", "calls_tools", "decode", "encode",
           "frame_calls_tools"]  # fmt: skip

MAGIC = b"NVC1"
_HEAD = len(MAGIC) + 32 + 4
Kind = Literal["json", "sse"]
# Bytes without which an answer or frame of that wire cannot hold a tool call: the usual text
# frame has none of them and is not parsed at all.
_MARKS: dict[Wire, bytes] = {"chat": b"_call", "messages": b"tool_use", "responses": b"_call"}


class BadEntry(ValueError):
    """A stored value that must not be served (why, in the message)."""


@dataclass(frozen=True, slots=True)
class Entry:
    kind: Kind
    payload: bytes  # the body, or the stream's events joined
    headers: dict[str, str]  # the x-nerve-* headers of the answer that was kept
    usage: Usage | None
    created: float  # wall clock
    expires: float


def encode(key: str, entry: Entry) -> bytes:
    usage = entry.usage
    meta = orjson.dumps(
        {
            "key": key,
            "kind": entry.kind,
            "headers": entry.headers,
            "usage": None
            if usage is None
            else [usage.prompt_tokens, usage.completion_tokens, usage.reasoning_tokens,
                  usage.total_tokens],
            "created": entry.created,
            "expires": entry.expires,
            "size": len(entry.payload),
        }
    )  # fmt: skip
    rest = struct.pack(">I", len(meta)) + meta + entry.payload
    return MAGIC + hashlib.sha256(rest).digest() + rest


def decode(key: str, raw: bytes, *, now: float, max_bytes: int) -> Entry:
    """The entry in `raw`, or BadEntry saying why it must not be served."""
    if len(raw) > max_bytes + 4096:  # the meta is small: this is no entry of ours
        raise BadEntry(f"{len(raw)} bytes, over max_entry_bytes")
    if len(raw) < _HEAD or not raw.startswith(MAGIC):
        raise BadEntry("not a version-1 entry")
    rest = raw[len(MAGIC) + 32 :]
    if hashlib.sha256(rest).digest() != raw[len(MAGIC) : len(MAGIC) + 32]:
        raise BadEntry("its checksum does not match (truncated or garbled)")
    (size,) = struct.unpack(">I", rest[:4])
    payload = rest[4 + size :]
    try:
        meta = orjson.loads(rest[4 : 4 + size])
        written_for, kind, length = meta["key"], meta["kind"], meta["size"]
        expires, created = float(meta["expires"]), float(meta["created"])
        headers = {str(k): str(v) for k, v in meta["headers"].items()}
        counts = meta["usage"]
        usage = None if counts is None else Usage(*(int(n) for n in counts[:4]))
    except (orjson.JSONDecodeError, LookupError, TypeError, ValueError, AttributeError) as e:
        raise BadEntry(f"unreadable meta ({type(e).__name__})") from None
    if written_for != key or length != len(payload):
        raise BadEntry("written under another key, or cut")
    if kind not in ("json", "sse"):
        raise BadEntry(f"unknown kind {kind!r}")
    if expires <= now:
        raise BadEntry("expired")
    return Entry(kind, payload, headers, usage, created, expires)


def calls_tools(wire: Wire | None, raw: bytes) -> bool:
    """Whether a whole answer of `wire` asks for a tool call (or cannot be read)."""
    if wire is None or _MARKS[wire] not in raw:
        return False
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return True
    return not isinstance(data, dict) or _answer_calls(wire, data)


def frame_calls_tools(wire: Wire | None, frame: bytes) -> bool:
    """Whether a stream frame of `wire` (one or more SSE events) starts or carries a tool call."""
    if wire is None or _MARKS[wire] not in frame:
        return False
    events, rest = sse.split_events(frame)
    for event in [*events, rest] if rest else events:
        _, data = sse.fields(event)
        if data is None or data == b"[DONE]" or _MARKS[wire] not in data:
            continue
        loaded = sse.load(data)
        if loaded is None or _event_calls(wire, loaded):
            return True
    return False


def _is_call(item: Any, wire: Wire) -> bool:
    kind = item.get("type") if isinstance(item, dict) else None
    if not isinstance(kind, str):
        return False
    # Messages: tool_use, server_tool_use, mcp_tool_use; Responses: function_call,
    # custom_tool_call, local_shell_call and the hosted tools' calls. All count.
    return kind.endswith("tool_use") if wire == "messages" else kind.endswith("_call")


def _answer_calls(wire: Wire, data: dict[str, Any]) -> bool:
    if wire == "chat":
        for choice in _list(data.get("choices")):
            message = choice.get("message") if isinstance(choice, dict) else None
            if isinstance(message, dict) and (
                message.get("tool_calls") or message.get("function_call")
            ):
                return True
            if isinstance(choice, dict) and choice.get("finish_reason") in _CHAT_STOPS:
                return True
        return False
    if wire == "messages":
        return data.get("stop_reason") == "tool_use" or any(
            _is_call(b, wire) for b in _list(data.get("content"))
        )
    return any(_is_call(item, wire) for item in _list(data.get("output")))


_CHAT_STOPS = ("tool_calls", "function_call")


def _event_calls(wire: Wire, data: dict[str, Any]) -> bool:
    if wire == "chat":
        for choice in _list(data.get("choices")):
            if not isinstance(choice, dict):
                continue
            delta = choice.get("delta")
            if isinstance(delta, dict) and (delta.get("tool_calls") or delta.get("function_call")):
                return True
            if choice.get("finish_reason") in _CHAT_STOPS:
                return True
        return False
    if wire == "messages":
        delta = data.get("delta")
        stop = delta.get("stop_reason") if isinstance(delta, dict) else None
        return stop == "tool_use" or _is_call(data.get("content_block"), wire)
    response = data.get("response")
    output = response.get("output") if isinstance(response, dict) else None
    kind = data.get("type")
    return (
        _is_call(data.get("item"), wire)
        or any(_is_call(item, wire) for item in _list(output))
        or (isinstance(kind, str) and "_call" in kind)  # response.function_call_arguments.delta
    )


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
