"""The words path memory reads from traffic (SPEC TP-2): what the user asked, what came back.

Three client dialects: "chat" (OpenAI chat completions), "messages" (Anthropic Messages) and
"responses" (OpenAI Responses). `asked` reads a request body in its own dialect, not the
chat-shaped view, because the view turns tool results into user messages (Messages and
Responses both do): a tool's output is neither what the person asked nor a useful query.
`answer_text` reads a whole answer; a `TextTap` reads an answer's SSE frames as they pass.
Both keep at most `MAX_CHARS`: a turn is memory, not an archive, and a record has a size cap.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

import orjson

from nerve.gateway.providers.sse import SSEParser

__all__ = ["DIALECTS", "MAX_CHARS", "Asked", "Dialect", "TextTap", "answer_text", "asked"]

Dialect = Literal["chat", "messages", "responses"]
DIALECTS: tuple[Dialect, ...] = ("chat", "messages", "responses")
MAX_CHARS = 8000  # per stored turn; 4 bytes a character at worst stays well under 64 KiB
# Claude Code puts these before the person's words in a user message; they are its own notes.
_REMINDER = "<system-reminder>"


@dataclass(frozen=True, slots=True)
class Asked:
    """What a request says the person asked.

    text     their last message's text ("" when they wrote none: only images, say)
    fresh    whether the conversation ends with it: False on a tool round (the request carries
             a tool's result), whose question was stored with the round that asked it
    session  the conversation's memory session: a hash of its first message, which a client
             resends with every turn, so every exchange of one conversation shares it
    """

    text: str
    fresh: bool
    session: str


def asked(dialect: str, body: dict[str, Any]) -> Asked:
    said = [_said(dialect, item) for item in _items(dialect, body)]
    spoken = [s for s in said if s is not None]
    first = spoken[0] if spoken else ""
    digest = hashlib.blake2b(first.encode("utf-8", "replace"), digest_size=8).hexdigest()
    return Asked(
        spoken[-1][:MAX_CHARS] if spoken else "",
        bool(said) and said[-1] is not None,
        f"gateway:{digest}",
    )


def _items(dialect: str, body: dict[str, Any]) -> list[Any]:
    """The conversation, oldest first, as the dialect holds it."""
    if dialect == "responses":
        items = body.get("input")
        return [{"role": "user", "content": items}] if isinstance(items, str) else _list(items)
    if dialect in ("chat", "messages"):
        return _list(body.get("messages"))
    raise ValueError(f"path memory knows no dialect {dialect!r} (one of {', '.join(DIALECTS)})")


def _said(dialect: str, item: Any) -> str | None:
    """The person's text in `item`, or None when it is not a person's message (a system or
    assistant message, a tool's result, a tool call)."""
    if not isinstance(item, dict) or item.get("role") != "user":
        return None
    if dialect == "responses" and item.get("type", "message") != "message":
        return None
    content = item.get("content")
    if isinstance(content, str):
        return content
    parts = _list(content)
    if dialect == "messages" and any(_kind(p) == "tool_result" for p in parts):
        return None  # a tool round: Claude Code's tool results come as user messages
    return "\n".join(
        p["text"] for p in parts
        if _kind(p) in ("text", "input_text") and isinstance(p.get("text"), str)
        and not p["text"].startswith(_REMINDER)
    )  # fmt: skip


def answer_text(dialect: str, raw: bytes) -> str:
    """The text of a whole (non-stream) answer in `dialect`; "" when it has none or is not
    JSON (tool calls only, an error body)."""
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return ""
    if not isinstance(body, dict):
        return ""
    if dialect == "chat":
        choices = _list(body.get("choices"))
        message = choices[0].get("message") if choices and isinstance(choices[0], dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        text = content if isinstance(content, str) else _texts(_list(content), ("text",))
    elif dialect == "messages":
        text = _texts(_list(body.get("content")), ("text",))
    elif dialect == "responses":
        messages = [i for i in _list(body.get("output")) if _kind(i) == "message"]
        text = "".join(_texts(_list(m.get("content")), ("output_text",)) for m in messages)
    else:
        raise ValueError(f"path memory knows no dialect {dialect!r}")
    return text[:MAX_CHARS]


def _texts(parts: Iterable[Any], kinds: tuple[str, ...]) -> str:
    return "".join(p["text"] for p in parts
                   if _kind(p) in kinds and isinstance(p.get("text"), str))  # fmt: skip


# -- streams ---------------------------------------------------------------------------------

Piece = Callable[[dict[str, Any]], Any]


def _chat_piece(event: dict[str, Any]) -> Any:
    for choice in _list(event.get("choices")):
        if isinstance(choice, dict) and choice.get("index", 0) == 0:
            delta = choice.get("delta")
            return delta.get("content") if isinstance(delta, dict) else None
    return None


def _messages_piece(event: dict[str, Any]) -> Any:
    delta = event.get("delta")
    if event.get("type") == "content_block_delta" and isinstance(delta, dict):
        return delta.get("text") if delta.get("type") == "text_delta" else None
    return None


def _responses_piece(event: dict[str, Any]) -> Any:
    return event.get("delta") if event.get("type") == "response.output_text.delta" else None


# Each dialect's text events carry a marker the others do not: an event without it is skipped
# before any JSON is parsed (usage, pings, tool-call arguments, the framing events).
_PIECES: dict[str, tuple[str, Piece]] = {
    "chat": ('"content"', _chat_piece),
    "messages": ('"text_delta"', _messages_piece),
    "responses": ("response.output_text.delta", _responses_piece),
}


class TextTap:
    """Accumulates the answer text of one stream, fed its frames as they go to the client.

    A frame may hold several events, or (from an upstream read in pieces) part of one: an
    incremental SSE parser keeps the rest for the next frame. When the tap is between events
    and a frame of whole events has no text marker, it is skipped unparsed. Nothing in a frame
    can make `feed` raise: it reads, it never judges.
    """

    __slots__ = ("_clean", "_marker", "_parser", "_parts", "_piece", "_size", "_skip")

    def __init__(self, dialect: str) -> None:
        if dialect not in _PIECES:
            raise ValueError(f"path memory knows no dialect {dialect!r}")
        marker, self._piece = _PIECES[dialect]
        self._marker = marker
        self._skip = marker.encode()
        self._parser = SSEParser()
        self._parts: list[str] = []
        self._size = 0
        self._clean = True  # the parser holds no part of an event

    @property
    def text(self) -> str:
        return "".join(self._parts)[:MAX_CHARS]

    def feed(self, frame: bytes) -> None:
        if self._size >= MAX_CHARS or not frame:
            return
        ends = frame.endswith(b"\n\n")
        if self._clean and ends and self._skip not in frame:
            return
        self._clean = ends
        for event in self._parser.feed(frame):
            if self._marker not in event.data:
                continue
            try:
                payload = orjson.loads(event.data)
            except orjson.JSONDecodeError:
                continue
            piece = self._piece(payload) if isinstance(payload, dict) else None
            if isinstance(piece, str) and piece:
                self._parts.append(piece)
                self._size += len(piece)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _kind(part: Any) -> Any:
    return part.get("type") if isinstance(part, dict) else None
