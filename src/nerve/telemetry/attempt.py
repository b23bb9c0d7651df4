"""One upstream call as a CLIENT span (SPEC OB-1), and the request it belongs to.

The gateway starts an `Attempt` for each candidate it calls (`Tracing.attempt`, kept on
`Served.span`): named `{gen_ai.operation.name} {gen_ai.request.model}`, child of whatever span is
current (the HTTP server span, an MCP tool's). The provider seam asks for the attempt's
`traceparent` as it sends (`Tracing.outgoing`), which also records the request's parameters.
`returned` reads the answer (or, for a stream, notes the first chunk and taps the frames);
`done` adds the usage and cost the gateway recorded; `fail` ends it with `error.type`.

Within an HTTP request (`Request`, set by the server span) an attempt that is done before the
response starts waits for it, keeping its end time, so that it carries what the response's
x-nerve-* headers say: `nerve.memory.recalled`, and `nerve.guard` on the attempt that served.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator
from contextvars import ContextVar
from typing import Any, Protocol

from opentelemetry.context import Context
from opentelemetry.trace import Span, Status, StatusCode, set_span_in_context

from nerve.telemetry.genai import FrameTap, answer_attributes, request_attributes

__all__ = ["ATTEMPT", "REQUEST", "Attempt", "Recorded", "Request", "TappedFrames"]


class _Usage(Protocol):
    @property
    def prompt_tokens(self) -> int: ...
    @property
    def completion_tokens(self) -> int: ...


class Recorded(Protocol):
    """What the gateway recorded of a call (its `Outcome`)."""

    @property
    def ok(self) -> bool: ...
    @property
    def usage(self) -> _Usage | None: ...
    @property
    def cost_usd(self) -> float: ...


class Request:
    """The HTTP request being served: its dialect, and the attempts made for it."""

    __slots__ = ("attempts", "responded", "server", "wire")

    def __init__(self, wire: str) -> None:
        self.wire = wire
        self.attempts: list[Attempt] = []
        self.responded = False
        self.server: Span | None = None  # its SERVER span

    def guarded(self, guard: str) -> None:
        """A stream's guard verdict, known only at its end (its headers left long before): on
        the server span and the attempt that answered."""
        if self.server is not None and self.server.is_recording():
            self.server.set_attribute("nerve.guard", guard)
        for attempt in self.attempts:  # failed attempts have ended: the streaming one has not
            if not attempt.ended and attempt.span.is_recording():
                attempt.span.set_attribute("nerve.guard", guard)

    def respond(self, recalled: int | None, guard: str | None) -> None:
        """The response starts: what its headers say goes on every attempt; those waiting end."""
        self.responded = True
        for attempt in self.attempts:
            attempt.respond(recalled, guard)

    def close(self) -> None:
        """The request is over (answered or not): nothing waits any more."""
        self.responded = True
        for attempt in self.attempts:
            attempt.respond(None, None)


REQUEST: ContextVar[Request | None] = ContextVar("nerve_telemetry_request", default=None)
ATTEMPT: ContextVar[Attempt | None] = ContextVar("nerve_telemetry_attempt", default=None)


class Attempt:
    __slots__ = ("_ended_at", "_request", "_started", "_tap", "capture", "context", "ended",
                 "ok", "span", "wire")  # fmt: skip

    def __init__(self, span: Span, request: Request | None, wire: str, capture: bool) -> None:
        self.span = span
        self.context: Context = set_span_in_context(span)
        self.wire = wire
        self.capture = capture
        self.ok = False
        self.ended = False
        self._request = request
        self._started = time.perf_counter()
        self._tap: FrameTap | None = None
        self._ended_at: int | None = None  # done, waiting for the response to start
        if request is not None:
            request.attempts.append(self)

    def sent(self, payload: Any) -> None:
        """The body as it goes upstream: its parameters (and with capture, its messages)."""
        if self.span.is_recording() and isinstance(payload, dict):
            self.span.set_attributes(request_attributes(payload, self.capture))

    def returned(self, result: object) -> None:
        """The call came back: a whole answer, or a stream whose first chunk arrived."""
        if not self.span.is_recording():
            return
        first = getattr(result, "first", None)
        if isinstance(first, bytes):
            ttft = (time.perf_counter() - self._started) * 1000
            self.span.set_attribute("nerve.ttft_ms", round(ttft, 3))
            self.span.add_event("first_chunk")
            self._tap = FrameTap(self.capture)
            self._tap.feed(first)
            result.rest = TappedFrames(result.rest, self._tap)  # type: ignore[attr-defined]
            return
        body = getattr(result, "body", None)
        if isinstance(body, bytes):
            self.span.set_attributes(answer_attributes(self.wire, body, self.capture))

    def done(self, outcome: Recorded, error: BaseException | None) -> None:
        """The gateway recorded the call: its usage and cost; an error ends it failed."""
        self.ok = outcome.ok and error is None
        if self.span.is_recording():
            attributes: dict[str, Any] = {"nerve.cost_usd": outcome.cost_usd}
            usage = outcome.usage
            if usage is not None:
                attributes["gen_ai.usage.input_tokens"] = usage.prompt_tokens
                attributes["gen_ai.usage.output_tokens"] = usage.completion_tokens
            if self._tap is not None:
                attributes.update(self._tap.attributes())
            self.span.set_attributes(attributes)
        if not self.ok:
            self._error(error)
        self._end()

    def fail(self, error: BaseException) -> None:
        """The call failed in a way the gateway does not record (not retryable, cancelled)."""
        if not self.ended:
            self._error(error)
            self._end()

    def respond(self, recalled: int | None, guard: str | None) -> None:
        if self.span.is_recording() and not self.ended:
            if recalled is not None:
                self.span.set_attribute("nerve.memory.recalled", recalled)
            if guard is not None and self.ok:
                self.span.set_attribute("nerve.guard", guard)
        if self._ended_at is not None:
            self.span.end(end_time=self._ended_at)
            self._ended_at = None
            self.ended = True

    def _error(self, error: BaseException | None) -> None:
        kind = type(error).__name__ if error is not None else "error"
        code = getattr(error, "code", None)  # a NerveError's code: upstream_status, timeout...
        self.span.set_attribute("error.type", code if isinstance(code, str) and code else kind)
        self.span.set_status(Status(StatusCode.ERROR, str(error) if error else None))

    def _end(self) -> None:
        if self.ended or self._ended_at is not None:
            return
        if self._request is not None and not self._request.responded:
            self._ended_at = time.time_ns()  # ends when the response starts (`respond`)
            return
        self.ended = True
        self.span.end()


class TappedFrames(AsyncGenerator[bytes, None]):
    """A stream's remaining frames, each shown to a FrameTap on the way; closing it closes
    the upstream's generator (as the gateway's `Stream.close` expects)."""

    def __init__(self, frames: AsyncGenerator[bytes, None], tap: FrameTap) -> None:
        self._frames = frames
        self._tap = tap

    async def asend(self, value: None) -> bytes:
        frame = await self._frames.asend(value)
        self._tap.feed(frame)
        return frame

    async def athrow(self, *args: Any) -> bytes:
        return await self._frames.athrow(*args)

    async def aclose(self) -> None:
        await self._frames.aclose()
