"""Server-sent events: an incremental parser and an encoder, shared by both wire protocols.

The parser follows the WHATWG event-stream rules that matter to LLM APIs: `\\n`, `\\r\\n` and `\\r`
line endings, multi-line `data`, comment lines, a leading BOM. `id` and `retry` are ignored.
Bytes are decoded one complete line at a time, so a chunk boundary inside a multi-byte UTF-8
character is harmless: line breaks are ASCII and never occur inside one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["SSEEvent", "SSEParser", "encode_sse"]

_LINE_END = re.compile(rb"[\r\n]")
_ANY_NEWLINE = re.compile(rb"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class SSEEvent:
    event: str | None
    data: str


class SSEParser:
    """Incremental parser: feed bytes as they arrive, get complete events."""

    __slots__ = ("_buf", "_cr", "_data", "_event", "_started")

    def __init__(self) -> None:
        self._buf = bytearray()  # only the unfinished last line, already searched
        self._data: list[str] = []
        self._event: str | None = None
        self._started = False
        self._cr = False  # the last byte seen was \r, so a leading \n must be skipped

    def feed(self, data: bytes) -> list[SSEEvent]:
        if self._cr and data:
            self._cr = False
            if data[:1] == b"\n":  # second half of a \r\n split across feeds
                data = data[1:]
        buf = self._buf
        pos = len(buf)  # no line ending before here: only the new bytes are searched
        buf.extend(data)
        events: list[SSEEvent] = []
        start = 0
        while (match := _LINE_END.search(buf, pos)) is not None:
            end = nxt = match.end()
            if buf[end - 1] == 0x0D:
                if end == len(buf):
                    self._cr = True
                elif buf[end] == 0x0A:
                    nxt += 1
            event = self._line(buf[start : end - 1].decode("utf-8", "replace"))
            if event is not None:
                events.append(event)
            start = pos = nxt
        if start:
            del buf[:start]  # bytearray drops a prefix without copying the rest
        return events

    def _line(self, line: str) -> SSEEvent | None:
        if not self._started:
            self._started = True
            line = line.removeprefix("\ufeff")
        if not line:
            return self._dispatch()
        if line[0] == ":":
            return None
        name, colon, value = line.partition(":")
        if colon and value[:1] == " ":
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        return None

    def _dispatch(self) -> SSEEvent | None:
        data, event = self._data, self._event
        self._data, self._event = [], None
        # The spec drops an event with no data lines, even if it named a type.
        return SSEEvent(event or None, "\n".join(data)) if data else None


def encode_sse(data: bytes | str, event: str | None = None) -> bytes:
    """One SSE event; every line of `data` becomes its own `data:` field."""
    raw = data.encode() if isinstance(data, str) else data
    head = b""
    if event is not None:
        if "\n" in event or "\r" in event:
            raise ValueError("an SSE event name cannot contain a line break")
        head = b"event: " + event.encode() + b"\n"
    if b"\n" not in raw and b"\r" not in raw:
        return head + b"data: " + raw + b"\n\n"
    lines = _ANY_NEWLINE.split(raw)
    return head + b"".join(b"data: " + line + b"\n" for line in lines) + b"\n"
