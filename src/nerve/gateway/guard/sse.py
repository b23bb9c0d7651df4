"""The few SSE operations the stream guard needs, on bytes: cut events, read their fields.

Events are kept as the exact bytes they came in (their blank line included), so an event the
guard does not change goes out as it arrived.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

__all__ = ["encode", "event_type", "fields", "load", "split_events", "whole"]

_END = re.compile(rb"\r\n\r\n|\n\n|\r\r")
_ENDINGS = (b"\n\n", b"\r\n\r\n", b"\r\r")
_HEAD_TYPE = re.compile(rb'\A\s*\{\s*"type"\s*:\s*"([^"\\]+)"')


def whole(frame: bytes) -> bool:
    """Whether `frame` ends where an event ends (nerve's and passthrough frames always do)."""
    return frame.endswith(b"\n\n") or frame.endswith(_ENDINGS)


def split_events(data: bytes) -> tuple[list[bytes], bytes]:
    """The complete events in `data`, each with its terminating blank line, and the rest."""
    if data.find(b"\n\n") == len(data) - 2 and b"\r" not in data:
        return [data], b""  # one whole event, as nerve and passthrough frames are
    events: list[bytes] = []
    start = 0
    for m in _END.finditer(data):
        events.append(data[start : m.end()])
        start = m.end()
    return events, data[start:]


def fields(event: bytes) -> tuple[str | None, bytes | None]:
    """`(event name, data)` of one event; data None when it has none (a comment, a keep-alive)."""
    if event.startswith(b"data: ") and event.count(b"\n") == 2:  # the common shapes, quickly
        return None, event[6:].rstrip(b"\r\n")
    if event.startswith(b"event: ") and event.count(b"\n") == 3:
        head, _, rest = event.partition(b"\n")
        if rest.startswith(b"data: "):
            return head[7:].rstrip(b"\r").decode("utf-8", "replace"), rest[6:].rstrip(b"\r\n")
    name: str | None = None
    data: list[bytes] = []
    for line in event.splitlines():
        if line.startswith(b"data:"):
            value = line[5:]
            data.append(value[1:] if value[:1] == b" " else value)
        elif line.startswith(b"event:"):
            value = line[6:]
            name = (value[1:] if value[:1] == b" " else value).decode("utf-8", "replace")
    return name, (b"\n".join(data) if data else None)


def event_type(name: str | None, data: bytes) -> str | None:
    """The event's type: its `event:` name, else the leading `"type"` of its JSON (both the
    Anthropic and the OpenAI Responses APIs put it first), without parsing the rest."""
    if name:
        return name
    m = _HEAD_TYPE.match(data)
    return m.group(1).decode() if m else None


def load(data: bytes) -> dict[str, Any] | None:
    """The event's JSON object, None when it is not one."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def encode(payload: dict[str, Any], name: str | None = None) -> bytes:
    head = b"event: " + name.encode() + b"\n" if name else b""
    return head + b"data: " + orjson.dumps(payload) + b"\n\n"
