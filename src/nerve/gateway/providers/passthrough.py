"""A native stream passed through: the upstream's SSE events go to the client as they come.

When the client speaks the upstream's own protocol (Anthropic Messages to an anthropic provider,
Responses or completions to an OpenAI one), nothing is translated: each event is forwarded as
soon as it is whole (`ping`s included), and only read on the way for its usage and for the end
of the stream. Events are re-framed whole, so a stream cut midway never leaves half an event
in front of the error event that follows.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable

import aiohttp

from nerve.errors import UpstreamError
from nerve.gateway.providers.base import Stream, parse_json, sse_events
from nerve.gateway.providers.sse import SSEEvent, encode_sse
from nerve.gateway.stats import Usage

__all__ = ["NativeStreamError", "UsageReader", "native_stream"]

# Reads one parsed event's payload: the usage it reports (None: none), and whether it ends the
# stream (the upstream's last event, after which nerve stops reading).
UsageReader = Callable[[str | None, object], tuple[Usage | None, bool]]


class NativeStreamError(UpstreamError):
    """The upstream sent an error event midway: the client gets that event as it was sent."""

    def __init__(self, provider: str, frame: bytes, data: str) -> None:
        super().__init__(f"{provider}: stream error: {data[:300]}", code="upstream_stream_error")
        self.frame = frame


async def native_stream(
    provider: str, response: aiohttp.ClientResponse, read: UsageReader, end: str
) -> Stream:
    usage: list[Usage] = []
    frames = _events(provider, response, read, end, usage)
    return await Stream.start(frames, response.close, usage)


async def _events(
    provider: str, response: aiohttp.ClientResponse, read: UsageReader, end: str,
    usages: list[Usage],
) -> AsyncGenerator[bytes, None]:  # fmt: skip
    async for event in sse_events(provider, response, end):
        frame = _frame(event)
        if event.data == "[DONE]":  # the OpenAI protocol's end (completions)
            yield frame
            return
        payload = parse_json(provider, event.data, "streamed")
        kind = event.event or (payload.get("type") if isinstance(payload, dict) else None)
        if kind in ("error", "response.failed") or (
            kind is None and isinstance(payload, dict) and "error" in payload
        ):
            raise NativeStreamError(provider, frame, event.data)
        used, last = read(kind, payload)
        if used is not None:
            usages.append(used)
        yield frame
        if last:
            return


def _frame(event: SSEEvent) -> bytes:
    return encode_sse(event.data, event.event)
