"""A scriptable fake LLM upstream speaking the OpenAI and Anthropic wire protocols over real HTTP.

It owns the network edge of the gateway's end-to-end tests: a real aiohttp server on
127.0.0.1:<free port>, run in a background thread with its own event loop so that sync tests
(the OpenAI SDK's sync client) and async tests can both use it. Wire shapes live in
`openai_wire` and `anthropic_wire`; this module owns HTTP, scripting and recording.

    with FakeUpstream() as up:
        up.script(Reply(text="hi"), Reply(status=429, headers={"Retry-After": "7"}))
        ...  # point the gateway at up.openai_base_url or up.anthropic_base_url
        assert up.wait_for_requests(2)[1].body["model"] == "fake-model"

Routes: POST /v1/chat/completions, /v1/responses, /v1/embeddings and /v1/completions (OpenAI),
POST /v1/messages and /v1/messages/count_tokens (Anthropic), GET /v1/models.
Stream controls (`cut_after`, `gate_after`) count content deltas: text pieces and tool-argument
pieces; framing events before them (role chunk, message_start, content_block_start, ping) are
always sent. Async tests wait with `await asyncio.to_thread(up.wait_for_requests, n)`.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from aiohttp import web

from tests.fakes import anthropic_wire, openai_wire, responses_wire
from tests.fakes.loopback import Loopback

__all__ = ["FakeUpstream", "Recorded", "Reply"]

DEFAULT_MODEL = "fake-model"


@dataclass
class Reply:
    """One scripted answer; the fields apply to both protocols.

    `tool_calls` are OpenAI-shaped (`arguments` may be a dict); with them the text is left out
    unless `chunks` is given. `json`/`raw` replace the body even for streaming requests (`raw`
    then goes out as text/event-stream). Status >= 400 answers with the protocol's error shape.
    """

    status: int = 200
    text: str = "Hello from fake"
    json: dict[str, Any] | None = None
    raw: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    hang: bool = False
    tool_calls: list[dict[str, Any]] | None = None
    usage: dict[str, int] | None = None
    chunks: list[str] | None = None
    cut_after: int | None = None
    gate_after: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Recorded:
    """One request as the fake received it (headers lower-cased; body None if not JSON)."""

    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes
    protocol: Literal["openai", "anthropic"]


class FakeUpstream(Loopback):
    """Real HTTP server on 127.0.0.1, scripted with `Reply`s, recording every request."""

    handler_cancellation = True  # a client that gives up on a hanging request frees its handler

    def __init__(self, *, name: str = "fake") -> None:
        super().__init__()
        self.name = name
        self.requests: list[Recorded] = []  # what `seen` records, richer
        self._cond = threading.Condition()
        self._scripts: dict[str | None, deque[Reply]] = {}
        self._models: list[str] = [DEFAULT_MODEL]
        self._ids = itertools.count(1)
        self._gate: asyncio.Event | None = None

    @property
    def openai_base_url(self) -> str:
        return self.url + "/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.url

    def routes(self, app: web.Application) -> None:
        self._gate = asyncio.Event()  # on the server's loop, as `release` expects
        app.router.add_post("/v1/chat/completions", self._openai)
        app.router.add_post("/v1/messages", self._anthropic)
        app.router.add_post("/v1/messages/count_tokens", self._count_tokens)
        app.router.add_post("/v1/responses", self._responses)
        app.router.add_post("/v1/embeddings", self._embeddings)
        app.router.add_post("/v1/completions", self._completions)
        app.router.add_get("/v1/models", self._list_models)

    # --- scripting and recording -------------------------------------------------------------

    def script(self, *replies: Reply, model: str | None = None) -> None:
        """Queue replies for requests asking for `model` (None: any model), used in order."""
        with self._cond:
            self._scripts.setdefault(model, deque()).extend(replies)
            if model is not None and model not in self._models:
                self._models.append(model)

    def release(self) -> None:
        """Open the gate: streams held at `gate_after` continue."""
        if self._loop is None or self._gate is None:
            raise RuntimeError("fake upstream is not running")
        self._loop.call_soon_threadsafe(self._gate.set)

    def wait_for_requests(self, n: int, timeout: float = 5.0) -> list[Recorded]:
        """Block until at least `n` requests have arrived; all recorded requests, in order."""
        with self._cond:
            if not self._cond.wait_for(lambda: len(self.requests) >= n, timeout):
                got = len(self.requests)
                raise TimeoutError(f"{self.name}: {got} of {n} requests after {timeout}s")
            return list(self.requests)

    def reset(self) -> None:
        """Forget scripts and recorded requests, and close the gate again."""
        with self._cond:
            self._scripts.clear()
            self._models = [DEFAULT_MODEL]
            self.requests.clear()
        if self._loop is not None and self._gate is not None:
            self._loop.call_soon_threadsafe(self._gate.clear)

    def _next_reply(self, model: str) -> Reply:
        with self._cond:
            for key in (model, None):
                queue = self._scripts.get(key)
                if queue:
                    return queue.popleft()
        return Reply()

    async def _record(self, request: web.Request, protocol: Literal["openai", "anthropic"]) -> Any:
        raw = await request.read()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        headers = {k.lower(): v for k, v in request.headers.items()}
        with self._cond:
            self.requests.append(Recorded(request.path, headers, body, raw, protocol))
            self._cond.notify_all()
        return body

    # --- routes ------------------------------------------------------------------------------

    async def _list_models(self, request: web.Request) -> web.Response:
        await self._record(request, "openai")
        with self._cond:
            models = list(self._models)
        return web.json_response(openai_wire.models(models, self.name))

    async def _openai(self, request: web.Request) -> web.StreamResponse:
        body = await self._record(request, "openai")
        if (invalid := openai_wire.validate(body)) is not None:
            return web.json_response(invalid[1], status=invalid[0])
        model, rid = body["model"], f"chatcmpl-fake{next(self._ids)}"
        reply = self._next_reply(model)
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        return await self._answer(
            request,
            reply,
            stream=bool(body.get("stream")),
            headers={"x-request-id": f"req_{rid}"},
            error=lambda: openai_wire.error_body(reply.status),
            full=lambda: openai_wire.completion(reply, model, rid),
            events=lambda: openai_wire.stream_events(
                reply, model, rid, include_usage=include_usage
            ),
        )

    async def _anthropic(self, request: web.Request) -> web.StreamResponse:
        body = await self._record(request, "anthropic")
        if (invalid := anthropic_wire.validate(request.headers, body)) is not None:
            return web.json_response(invalid[1], status=invalid[0])
        model, rid = body["model"], f"msg_fake{next(self._ids)}"
        reply = self._next_reply(model)
        return await self._answer(
            request,
            reply,
            stream=bool(body.get("stream")),
            headers={"request-id": f"req_{rid}"},
            error=lambda: anthropic_wire.error_body(reply.status),
            full=lambda: anthropic_wire.message(reply, model, rid),
            events=lambda: anthropic_wire.stream_events(reply, model, rid),
        )

    async def _count_tokens(self, request: web.Request) -> web.StreamResponse:
        body = await self._record(request, "anthropic")
        counted = {"max_tokens": 1, **(body or {})}
        if (invalid := anthropic_wire.validate(request.headers, counted)) is not None:
            return web.json_response(invalid[1], status=invalid[0])
        reply = self._next_reply(body["model"])
        return await self._answer(
            request, reply, stream=False, headers={},
            error=lambda: anthropic_wire.error_body(reply.status),
            full=lambda: {"input_tokens": 4242},
            events=lambda: [],
        )  # fmt: skip

    async def _responses(self, request: web.Request) -> web.StreamResponse:
        body = await self._record(request, "openai")
        if (invalid := responses_wire.validate(body, "input")) is not None:
            return web.json_response(invalid[1], status=invalid[0])
        model, rid = body["model"], f"fake{next(self._ids)}"
        reply = self._next_reply(model)
        return await self._answer(
            request, reply, stream=bool(body.get("stream")), headers={"x-request-id": rid},
            error=lambda: openai_wire.error_body(reply.status),
            full=lambda: responses_wire.response(reply, model, rid),
            events=lambda: responses_wire.stream_events(reply, model, rid),
        )  # fmt: skip

    async def _embeddings(self, request: web.Request) -> web.StreamResponse:
        body = await self._record(request, "openai")
        if (invalid := responses_wire.validate(body, "input")) is not None:
            return web.json_response(invalid[1], status=invalid[0])
        reply = self._next_reply(body["model"])
        return await self._answer(
            request, reply, stream=False, headers={},
            error=lambda: openai_wire.error_body(reply.status),
            full=lambda: responses_wire.embeddings(body, body["model"]),
            events=lambda: [],
        )  # fmt: skip

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        body = await self._record(request, "openai")
        if (invalid := responses_wire.validate(body, "prompt")) is not None:
            return web.json_response(invalid[1], status=invalid[0])
        model, rid = body["model"], f"cmpl-fake{next(self._ids)}"
        reply = self._next_reply(model)
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        return await self._answer(
            request, reply, stream=bool(body.get("stream")), headers={},
            error=lambda: openai_wire.error_body(reply.status),
            full=lambda: responses_wire.completion(reply, model, rid, body),
            events=lambda: responses_wire.completion_events(reply, model, rid,
                                                            include_usage=include_usage),
        )  # fmt: skip

    # --- answering ---------------------------------------------------------------------------

    async def _answer(
        self,
        request: web.Request,
        reply: Reply,
        *,
        stream: bool,
        headers: dict[str, str],
        error: Callable[[], dict[str, Any]],
        full: Callable[[], dict[str, Any]],
        events: Callable[[], list[openai_wire.Event]],
    ) -> web.StreamResponse:
        """The protocol-neutral part: delay, hang, overrides, errors, then body or stream."""
        assert self._closing is not None and self._gate is not None
        if reply.hang:
            await self._closing.wait()
            return self._drop(request, web.Response())
        if reply.delay > 0 and not await self._until(asyncio.sleep(reply.delay)):
            return self._drop(request, web.Response())
        headers = {**headers, **reply.headers}
        if reply.raw is not None:  # sent as is, as an event stream when one was asked for
            sse = stream and reply.status < 400
            kind = "text/event-stream" if sse else "application/json"
            return web.Response(
                body=reply.raw, status=reply.status, headers={"Content-Type": kind, **headers}
            )
        if reply.json is not None:
            payload = reply.json
        elif reply.status >= 400:
            payload = error()
        elif stream:
            return await self._stream(request, reply, events(), headers)
        else:
            payload = full()
        return web.Response(
            body=json.dumps(payload).encode(),
            status=reply.status,
            headers={"Content-Type": "application/json", **headers},
        )

    async def _stream(
        self,
        request: web.Request,
        reply: Reply,
        events: list[openai_wire.Event],
        headers: dict[str, str],
    ) -> web.StreamResponse:
        assert self._gate is not None
        sse_headers = {
            "Content-Type": "text/event-stream; charset=utf-8",
            "Cache-Control": "no-cache",
        }
        resp = web.StreamResponse(status=reply.status, headers={**sse_headers, **headers})
        await resp.prepare(request)
        sent, gated = 0, False
        for kind, data in events:
            if kind != "open":  # a content boundary: where streams are cut or held
                if sent == reply.cut_after:
                    return self._drop(request, resp)
                if sent == reply.gate_after and not gated:
                    gated = True
                    if not await self._until(self._gate.wait()):
                        return self._drop(request, resp)
            await resp.write(data)  # aiohttp hands each write to the socket: a true stream
            if kind == "piece":
                sent += 1
        return resp

    async def _until(self, waited: Awaitable[Any]) -> bool:
        """Await `waited` unless the server starts stopping first; True if `waited` finished."""
        assert self._closing is not None
        task = asyncio.ensure_future(waited)
        closing = asyncio.ensure_future(self._closing.wait())
        try:
            await asyncio.wait({task, closing}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            task.cancel()
            closing.cancel()
        return not self._closing.is_set()

    @staticmethod
    def _drop(request: web.Request, resp: web.StreamResponse) -> web.StreamResponse:
        """Close the TCP connection mid-answer; aiohttp treats the rest as a client disconnect."""
        if request.transport is not None:
            request.transport.close()
        return resp
