"""A dialect: one protocol clients speak to nerve, over the one gateway.

A dialect reads its endpoint's body, gives the gateway a chat-shaped `view` of it (the router
reads its messages, admission its size and `max_tokens`, the stats its `user`) and calls a
candidate: natively where the provider speaks the client's protocol (the body passes through
with only `model` replaced), else through the chat-completions pivot every provider speaks,
translated there and back. Answers, stream frames and errors leave in the dialect's own shape.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

import orjson

from nerve.errors import NerveError, RequestError, UpstreamError
from nerve.gateway.core import Plan
from nerve.gateway.providers import Completion, Provider, Stream
from nerve.gateway.providers.passthrough import NativeStreamError
from nerve.json_limits import loads

__all__ = ["KEEPALIVE", "STREAM_ENDS", "Dialect", "DialectStream", "Incoming", "Wire",
           "ends_stream", "parse_object", "translate"]  # fmt: skip

Wire = Literal["chat", "messages", "responses"]
KEEPALIVE = b": keep-alive\n\n"  # an SSE comment: every SSE client skips it
# What the frame a stream that ended whole ends with carries, per answer format (None: the
# OpenAI protocol's, as completions end): the cache keeps only such streams.
STREAM_ENDS: dict[Wire | None, bytes] = {
    "chat": b"[DONE]", "messages": b"message_stop", "responses": b"response.completed",
    None: b"[DONE]",
}  # fmt: skip
# The events that end a stream, as they start an SSE event: the endpoint bills a call before
# the frame carrying one goes out (a Responses stream out of tokens ends incomplete).
_FINAL: dict[Wire | None, tuple[bytes, ...]] = {
    "chat": (b"data: [DONE]",), "messages": (b"event: message_stop",),
    "responses": (b"event: response.completed", b"event: response.incomplete"),
    None: (b"data: [DONE]",),
}  # fmt: skip


def ends_stream(wire: Wire | None, frame: bytes) -> bool:
    """Whether `frame` (one or more SSE events) holds the event that ends a `wire` stream."""
    return any(frame.startswith(end) or b"\n\n" + end in frame for end in _FINAL[wire])


@dataclass(frozen=True, slots=True)
class Incoming:
    """A parsed request: its body, and the client's headers (lower-cased) a passthrough reads."""

    body: dict[str, Any]
    headers: Mapping[str, str]


class Dialect(ABC):
    name: str  # what it serves, in messages: "chat completions", "embeddings"...
    keepalive: bytes = KEEPALIVE
    # The answer format, for what reads answers on the traffic path (the tool-call guard,
    # path memory); None: answers without tool calls or turns (embeddings, completions).
    wire: Wire | None = None

    @abstractmethod
    def parse(self, raw: bytes) -> dict[str, Any]:
        """The request body, checked (a RequestError naming the field)."""

    @abstractmethod
    def view(self, body: dict[str, Any]) -> dict[str, Any]:
        """The body as the gateway reads it: `model`, chat `messages`, `max_tokens`, `user`."""

    def serves(self, provider: Provider) -> bool:
        """Whether `provider` can answer this dialect at all (natively or translated)."""
        return True

    def order(self, plan: Plan, body: dict[str, Any], providers: Mapping[str, Provider]) -> Plan:
        """The plan's candidates for this body: those that cannot serve it are dropped."""
        targets = tuple(t for t in plan.targets if self.serves(providers[t.provider]))
        if not targets:
            raise RequestError(
                f"no model of {plan.route!r} serves {self.name} "
                f"({', '.join(map(str, plan.targets))}): use a route or provider/model "
                "whose provider does",
                param="model", code="model_not_supported",
            )  # fmt: skip
        return plan if len(targets) == len(plan.targets) else replace(plan, targets=targets)

    @abstractmethod
    async def complete(self, provider: Provider, request: Incoming, model: str) -> Completion:
        """One answer, its body in this dialect."""

    @abstractmethod
    async def open_stream(self, provider: Provider, request: Incoming, model: str) -> Stream:
        """A stream whose frames are this dialect's SSE events."""

    def error_body(self, error: NerveError) -> bytes:
        return orjson.dumps(error.to_dict())

    def error_frame(self, error: NerveError, stream: Stream) -> bytes:
        """The event that tells a client its stream failed midway."""
        if isinstance(error, NativeStreamError):
            return error.frame  # the upstream's own error event, as it sent it
        if isinstance(stream, DialectStream) and stream.fail is not None:
            return stream.fail(error)
        return b"data: " + orjson.dumps(error.to_dict()) + b"\n\n"


def parse_object(raw: bytes, what: str) -> dict[str, Any]:
    """A request body that must be one JSON object (held to json_limits)."""
    if not raw:
        raise RequestError(f"the request body is empty; send a JSON {what} request",
                           code="invalid_json")  # fmt: skip
    body = loads(raw)
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object", code="invalid_json")
    return body


class DialectStream(Stream):
    """A stream that knows how to tell its client it failed (`fail`): in the dialect's own
    terms, such as a Responses `response.failed` that carries the response so far."""

    fail: Callable[[NerveError], bytes] | None = None

    @classmethod
    def of(cls, stream: Stream, fail: Callable[[NerveError], bytes]) -> DialectStream:
        out = cls(stream.first, stream.rest, stream.release, stream.usage)
        out.fail = fail
        return out


Feed = Callable[[dict[str, Any]], list[bytes]]


def translate(
    stream: Stream, feed: Feed, finish: Callable[[], list[bytes]],
    fail: Callable[[NerveError], bytes],
) -> DialectStream:  # fmt: skip
    """`stream`'s OpenAI chunk frames (`data: {...}`, then `data: [DONE]`) through a translator:
    `feed` takes each chunk, `finish` ends at [DONE]. Nothing is held back: every frame the
    translator gives for a chunk goes out with it. The usage list is the upstream stream's."""
    first = b"".join(_translated(stream.first, feed, finish))
    translated = Stream(first, _rest(stream, feed, finish), stream.release, stream.usage)
    return DialectStream.of(translated, fail)


async def _rest(stream: Stream, feed: Feed, finish: Callable[[], list[bytes]]
                ) -> AsyncGenerator[bytes, None]:  # fmt: skip
    try:
        async for frame in stream.rest:
            out = b"".join(_translated(frame, feed, finish))
            if out:
                yield out
    finally:
        await stream.rest.aclose()


def _translated(frame: bytes, feed: Feed, finish: Callable[[], list[bytes]]) -> list[bytes]:
    """One upstream frame (`data: ...\\n\\n`, possibly several) as this dialect's frames."""
    out: list[bytes] = []
    for line in frame.split(b"\n"):
        if not line.startswith(b"data: "):
            continue
        data = line[6:]
        if data == b"[DONE]":
            out += finish()
            continue
        try:
            chunk = orjson.loads(data)
        except orjson.JSONDecodeError:
            raise UpstreamError("a streamed chunk is invalid JSON",
                                code="upstream_bad_json") from None  # fmt: skip
        if isinstance(chunk, dict):
            out += feed(chunk)
    return out
