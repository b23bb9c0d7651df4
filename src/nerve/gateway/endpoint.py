"""The gateway's model endpoints as bare ASGI apps: one class, one per dialect.

`/v1/chat/completions`, `/v1/messages`, `/v1/responses`, `/v1/embeddings` and `/v1/completions`
are the hot path, so they skip the framework's Request/Response objects: the body is read with a
size cap (413 before reading past it), planned, looked up in the response cache (cache.py: a hit
is replayed unbilled), admitted (limits, keys, budgets) and walked over its candidates like any
other; the answer goes out as the dialect's bytes, and a stream is pumped frame by frame while a
watcher listens for the client hanging up and a keep-alive is sent whenever the upstream is
silent for `limits.stream_keepalive_seconds`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from functools import partial
from typing import Any

from nerve.access.principal import Principal, principal_of
from nerve.asgi import encode_headers, send_json
from nerve.errors import NerveError, PayloadTooLarge, RequestTimeout, UpstreamError
from nerve.gateway.admission import KeyGate, Ticket
from nerve.gateway.cache import Lookup, ResponseCache
from nerve.gateway.core import Gateway, Plan, Served, Streaming, wants_private
from nerve.gateway.dialects.base import Dialect, Incoming, ends_stream
from nerve.gateway.stats import Usage
from nerve.gateway.traffic import Passage, TrafficPath
from nerve.telemetry import active

__all__ = ["Endpoint", "read_body"]

log = logging.getLogger("nerve.gateway")
Scope = MutableMapping[str, Any]
SSE_HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]


class Endpoint:
    def __init__(
        self, gateway: Gateway, keys: KeyGate, dialect: Dialect, *, max_body_bytes: int,
        body_seconds: float = 30, keepalive_seconds: float = 10, traffic: TrafficPath | None = None,
        cache: ResponseCache | None = None,
    ) -> None:  # fmt: skip
        self.gateway = gateway
        self.keys = keys
        self.dialect = dialect
        self.traffic = traffic  # the guard and memory on the path (None: neither)
        self.cache = cache  # the exact-match response cache (None: no route or key has one)
        self.max_body_bytes = max_body_bytes
        self.body_seconds = body_seconds
        self.keepalive_seconds = keepalive_seconds

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if active.tracing is not None:  # SPEC OB-1: the call inside its server span
            return await active.tracing.serve(self._serve, scope, receive, send)
        await self._serve(scope, receive, send)

    async def _serve(self, scope: Scope, receive: Any, send: Any) -> None:
        principal = principal_of(scope)  # who the boundary let in
        dialect = self.dialect
        ticket: Ticket | None = None
        served: Served | None = None
        usage: Usage | None = None
        try:
            raw = await read_body(scope, receive, self.max_body_bytes, self.body_seconds)
            body = dialect.parse(raw)
            view = dialect.view(body)  # what routing and admission read, chat-shaped
            headers = _headers(scope)
            private = wants_private(headers)
            plan = self._plan(view, body, principal, private)
            passage = None
            if self.traffic is not None:
                passage = self.traffic.passage(dialect.wire, plan, principal, headers, view)
            if passage is not None and passage.recalls:
                body = await passage.recall(body)
                if passage.recalled:
                    view = dialect.view(body)  # admission counts the block's tokens too
                    if self.gateway.may_turn_private(plan, private):  # personal data in it
                        plan = self._plan(view, body, principal, private)  # goes private
            lookup = self._lookup(plan, principal, headers, body)  # keyed after recall
            if lookup is not None and (hit := await lookup.fetch()) is not None:
                ticket = await self.keys.admit(principal)  # rate limits only: never billed
                await lookup.replay(hit, send, passage, SSE_HEADERS)
                return
            ticket = await self.keys.admit(principal, view, plan)  # limits, budget, 1st gate
            request = Incoming(body, headers)
            if body.get("stream"):
                async with self.gateway.streaming(
                    view, plan, ticket.gate, call=lambda p, m: dialect.open_stream(p, request, m)
                ) as held:
                    served = held.served
                    bill = partial(self._settle, ticket, served, held.stream.usage)
                    await self._pump(held, receive, send, passage, lookup, bill)
                    usage = held.stream.usage[-1] if held.stream.usage else None
            else:
                completion, served = await self.gateway.complete(
                    view, plan, ticket.gate, call=lambda p, m: dialect.complete(p, request, m)
                )
                usage = completion.usage
                answer, extra = completion.body, served.headers()
                guarded: dict[str, str] = {}
                if passage is not None:
                    answer, guarded = await passage.answer(answer)
                    extra.update(passage.headers(), **guarded)
                if lookup is not None:  # kept before it goes out: the next ask finds it
                    extra.update(lookup.headers())
                    await lookup.keep(served, completion.body, answer, usage, guarded)
                await self._settle(ticket, served, usage)  # billed before the client has it
                await send_json(send, 200, answer, extra)
        except ConnectionAbortedError:
            pass  # the client left before sending its whole body: nobody to answer
        except NerveError as e:
            if not isinstance(e, UpstreamError):
                self.gateway.stats.record_rejection(e.code or e.type)
            await send_json(send, e.status, dialect.error_body(e), e.headers())
        except Exception:
            log.exception("unexpected error in %s", scope.get("path"))
            internal = NerveError("internal error; see the server log", code="internal")
            await send_json(send, internal.status, dialect.error_body(internal), {})
        finally:
            if ticket is not None:
                await self._leave(ticket, served, usage)

    def _lookup(
        self, plan: Plan, principal: Principal, headers: dict[str, str], body: dict[str, Any]
    ) -> Lookup | None:
        if self.cache is None:
            return None
        target = self.gateway.first_callable(plan)
        return self.cache.lookup(self.dialect, plan, principal, headers, body, target)

    def _plan(
        self, view: dict[str, Any], body: dict[str, Any], principal: Principal, private: bool
    ) -> Plan:
        plan = self.gateway.plan(view, principal, private=private)
        return self.keys.restrict(principal, self.dialect.order(plan, body, self.gateway.providers))

    async def _settle(
        self, ticket: Ticket, served: Served, usage: Usage | list[Usage] | None
    ) -> None:
        """Bill the call before its answer goes out: a replica killed the instant after still
        leaves it billed (settled only after, it was a hold released unbilled: issue 19). A
        stream's `usage` is its list, read when its last event is about to go out."""
        if isinstance(usage, list):
            usage = usage[-1] if usage else None
        try:
            await self.keys.settle(ticket, target=served.target, usage=usage)
        except Exception:  # the answer goes out anyway; a hold not settled expires on its own
            log.exception("settling key %r's spend failed", ticket.principal.name)

    async def _leave(self, ticket: Ticket, served: Served | None, usage: Usage | None) -> None:
        try:
            await self.keys.leave(
                ticket, target=served.target if served else None, usage=usage,
                answered=served is not None,
            )  # fmt: skip
        except Exception:  # the answer is out; a hold not settled expires on its own
            log.exception("settling key %r's spend failed", ticket.principal.name)

    async def _pump(
        self, held: Streaming, receive: Any, send: Any, passage: Passage | None,
        lookup: Lookup | None = None, bill: Callable[[], Awaitable[None]] | None = None,
    ) -> None:  # fmt: skip
        """Forward `held.stream` to the client; what it ended with goes in `held.error` (the
        gateway finishes the stream when the caller's `streaming` block ends). With `lookup`,
        the response cache reads the frames and keeps them if the stream ends whole. `bill`
        runs once, before the frame ending the stream goes out (a stream that never ends whole
        is settled when the call leaves, as before)."""
        stream, served = held.stream, held.served
        headers = served.headers() if passage is None else {**served.headers(), **passage.headers()}
        tap = None if lookup is None else lookup.tap()
        if lookup is not None:
            headers.update(lookup.headers())
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": SSE_HEADERS + encode_headers(headers),
            }
        )
        error: Exception | None = None
        loop = asyncio.get_running_loop()
        last = loop.time()  # when the client last got a frame

        async def frame(body: bytes) -> None:
            nonlocal last, bill
            if bill is not None and ends_stream(self.dialect.wire, body):
                billing, bill = bill, None
                await billing()
            await send({"type": "http.response.body", "body": body, "more_body": True})
            last = loop.time()

        async def relay(body: bytes) -> None:
            if tap is not None:
                tap.upstream(body)  # before the guard: a call it blocks is a call all the same
            # Through the guard: a tool call's frames wait for its verdict.
            for out in await passage.frames(body) if passage is not None else (body,):
                if tap is not None:
                    tap.sent(out)
                await frame(out)

        async def forward() -> None:
            nonlocal error
            try:
                await relay(stream.first)
                async for body in stream.rest:
                    await relay(body)
                for out in passage.end(None) if passage is not None else ():
                    if tap is not None:
                        tap.sent(out)
                    await frame(out)
                if tap is not None:  # whole: kept before the last byte, as a whole answer is
                    await tap.done(served, stream.usage[-1] if stream.usage else None)
            except UpstreamError as e:  # midway: one error event, then the stream ends
                error = e
                log.warning("STREAM CUT route=%s %s after its first frame: %s",
                            served.route, served.target, e.message)  # fmt: skip
                failure = self.dialect.error_frame(e, stream)
                # Through the guard too: a Responses `response.failed` repeats the output so
                # far, a held call included. What the guard keeps back carries no call.
                for out in (await passage.frames(failure) if passage else None) or [failure]:
                    await frame(out)

        async def keepalive() -> None:
            while True:
                await asyncio.sleep(last + self.keepalive_seconds - loop.time())
                if loop.time() - last >= self.keepalive_seconds:
                    await frame(self.dialect.keepalive)

        pump = asyncio.ensure_future(forward())
        watcher = asyncio.ensure_future(wait_disconnect(receive))
        ticker = asyncio.ensure_future(keepalive())
        try:
            await asyncio.wait((pump, watcher), return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (pump, watcher, ticker):
                task.cancel()
            outcome, *_ = await asyncio.gather(pump, watcher, ticker, return_exceptions=True)
            if pump.cancelled():
                error = error or ConnectionAbortedError("client disconnected")
            elif isinstance(outcome, Exception):
                log.error("stream forwarding failed", exc_info=outcome)
                error = error or outcome
            if passage is not None and error is not None:
                passage.end(error)  # what it still held is dropped: nothing unjudged goes out
            held.end(error)
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def wait_disconnect(receive: Any) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def read_body(scope: Scope, receive: Any, limit: int, seconds: float = 30) -> bytes:
    """The whole body, or 413 past `limit` bytes, or 408 unless it all came within `seconds`
    (a client that sends part of a body and goes quiet holds nothing for longer)."""
    try:
        async with asyncio.timeout(seconds):
            return await _read(scope, receive, limit)
    except TimeoutError:
        raise RequestTimeout(
            f"the request body did not arrive within {seconds:g} s", code="body_timeout"
        ) from None


async def _read(scope: Scope, receive: Any, limit: int) -> bytes:
    for name, value in scope["headers"]:
        if name == b"content-length" and value.isdigit() and int(value) > limit:
            raise PayloadTooLarge(f"request body exceeds {limit} bytes", code="body_too_large")
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ConnectionAbortedError("client disconnected while sending the body")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise PayloadTooLarge(f"request body exceeds {limit} bytes", code="body_too_large")
        chunks.append(chunk)
        if not message.get("more_body"):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _headers(scope: Scope) -> dict[str, str]:
    """The request's headers, lower-cased as ASGI gives them (the last of a repeated one)."""
    return {name.decode("latin-1"): value.decode("latin-1") for name, value in scope["headers"]}
