"""The model's answer as it is written: a streaming `ask` for channels that show partial replies.

`gateway_stream_ask(get_gateway)` asks through `Gateway.streaming` and hands each piece of the
answer's text to `on_delta` as it arrives, then returns the same completion dict the plain
`ask` does (content, tool calls assembled from their deltas, usage), so the tool loop cannot
tell them apart. The web chat passes an `on_delta` that sends `{"kind": "delta"}` frames; a
failure midway raises the gateway's error, and the loop answers it as for any call.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import orjson

from nerve.gateway.core import Gateway
from nerve.gateway.providers import Stream

__all__ = ["Delta", "StreamFn", "gateway_stream_ask"]

Delta = Callable[[str], Awaitable[None]]  # a piece of the answer's text, as it arrives
StreamFn = Callable[[dict[str, Any], Delta], Awaitable[dict[str, Any]]]


class _Assembly:
    """A chat completion put back together from `chat.completion.chunk` deltas."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.usage: dict[str, Any] | None = None
        self.finish: str | None = None

    def add(self, chunk: dict[str, Any]) -> str:
        """Fold one chunk in; the text it adds (to show now)."""
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        added = ""
        for choice in chunk.get("choices") or ():
            delta = choice.get("delta") or {}
            self.finish = choice.get("finish_reason") or self.finish
            if isinstance(delta.get("content"), str):
                added += delta["content"]
            for call in delta.get("tool_calls") or ():
                slot = self.calls.setdefault(int(call.get("index", 0)), {
                    "id": "", "type": "function", "function": {"name": "", "arguments": ""},
                })  # fmt: skip
                slot["id"] = call.get("id") or slot["id"]
                fn = call.get("function") or {}
                slot["function"]["name"] += fn.get("name") or ""
                slot["function"]["arguments"] += fn.get("arguments") or ""
        self.text.append(added)
        return added

    def completion(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.text) or None}
        if self.calls:
            message["tool_calls"] = [self.calls[i] for i in sorted(self.calls)]
        answer: dict[str, Any] = {"choices": [{"message": message, "finish_reason": self.finish}]}
        if self.usage is not None:
            answer["usage"] = self.usage
        return answer


def _chunks(frame: bytes) -> list[dict[str, Any]]:
    """The JSON chunks of one or more SSE events (`data: {...}`), [DONE] and comments left out."""
    found = []
    for line in frame.splitlines():
        data = line.removeprefix(b"data:").strip() if line.startswith(b"data:") else b""
        if data and data != b"[DONE]":
            parsed = orjson.loads(data)
            if isinstance(parsed, dict):
                found.append(parsed)
    return found


async def _frames(stream: Stream) -> AsyncIterator[bytes]:
    yield stream.first
    async for frame in stream.rest:
        yield frame


def gateway_stream_ask(get_gateway: Callable[[], Gateway]) -> StreamFn:
    async def ask(body: dict[str, Any], on_delta: Delta) -> dict[str, Any]:
        assembly = _Assembly()
        async with get_gateway().streaming({**body, "stream": True}) as held:
            async for frame in _frames(held.stream):
                for chunk in _chunks(frame):
                    if text := assembly.add(chunk):
                        await on_delta(text)
            held.end(None)
        return assembly.completion()

    return ask
