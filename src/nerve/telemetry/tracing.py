"""The live tracer (SPEC OB-1): the spans nerve makes, exported over OTLP/HTTP in batches.

One `Tracing` per process, in `active.tracing` while the server runs (lifecycle.py). It has its
own TracerProvider (never the global one: libraries that use the OpenTelemetry API on their own
stay silent), sampled `ParentBased(TraceIdRatioBased(sample_ratio))`: a client's sampled
`traceparent` is followed, a new trace is kept at the ratio. The spans:

    POST /v1/chat/completions   SERVER  serve(): continues the client's traceparent (W3C)
      chat gpt-4o-mini          CLIENT  attempt(): one per upstream call (attempt.py)
      safety.check, memory.recall, memory.store, execute_tool {name}   traced() (traced.py)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Mapping, MutableMapping
from typing import Any, Protocol, TypeVar
from urllib.parse import urlsplit

from opentelemetry.context import Context
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased
from opentelemetry.trace import Span, SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from nerve import __version__
from nerve.telemetry.attempt import ATTEMPT, REQUEST, Attempt, Request
from nerve.telemetry.describe import Describe
from nerve.telemetry.genai import OPERATIONS

__all__ = ["Tracing"]

R = TypeVar("R")
App = Callable[[MutableMapping[str, Any], Any, Any], Awaitable[None]]
# The model endpoints → the dialect their answers are in.
WIRES = {"/v1/chat/completions": "chat", "/v1/messages": "messages", "/v1/responses": "responses",
         "/v1/embeddings": "embeddings", "/v1/completions": "completions"}  # fmt: skip
# What the answer's headers say, on the server span.
_HEADERS = {b"x-nerve-route": "nerve.route", b"x-nerve-provider": "nerve.provider",
            b"x-nerve-model": "nerve.model", b"x-nerve-decided-by": "nerve.router.layer",
            b"x-nerve-guard": "nerve.guard", b"x-nerve-cache": "nerve.cache"}  # fmt: skip


class _Target(Protocol):
    @property
    def provider(self) -> str: ...
    @property
    def model(self) -> str: ...


class _Served(Protocol):
    """Who is called (the gateway's `Served`)."""

    @property
    def route(self) -> str: ...
    @property
    def target(self) -> _Target: ...
    @property
    def fallback(self) -> bool: ...
    @property
    def decided_by(self) -> str | None: ...


class _Upstream(Protocol):
    """The provider's config row (ProviderConfig)."""

    @property
    def protocol(self) -> str: ...
    @property
    def base_url(self) -> str: ...


class Tracing:
    def __init__(self, provider: TracerProvider, *, capture_content: bool = False) -> None:
        self.provider = provider
        self.tracer = provider.get_tracer("nerve", __version__)
        self.capture_content = capture_content
        self.propagator = TraceContextTextMapPropagator()
        self._servers: dict[str, tuple[str | None, int | None]] = {}

    @classmethod
    def export_to(
        cls, url: str, *, service_name: str, sample_ratio: float, headers: Mapping[str, str],
        capture_content: bool,
    ) -> Tracing:  # fmt: skip
        resource = Resource.create({"service.name": service_name, "service.version": __version__})
        sampler = ParentBased(TraceIdRatioBased(sample_ratio))
        provider = TracerProvider(resource=resource, sampler=sampler, shutdown_on_exit=False)
        exporter = OTLPSpanExporter(endpoint=url, headers=dict(headers), timeout=10)
        provider.add_span_processor(BatchSpanProcessor(exporter))
        return cls(provider, capture_content=capture_content)

    # -- the HTTP server span ------------------------------------------------------------------

    async def serve(self, app: App, scope: MutableMapping[str, Any], receive: Any,
                    send: Any) -> None:  # fmt: skip
        """Run the ASGI `app` for one model request inside its SERVER span."""
        carrier: dict[str, str] = {}
        agent = None
        for name, value in scope["headers"]:
            if name in (b"traceparent", b"tracestate"):
                carrier[name.decode()] = value.decode("latin-1")
            elif name == b"user-agent":
                agent = value.decode("latin-1")
        parent = self.propagator.extract(carrier) if carrier else Context()
        method, path = scope.get("method", "POST"), scope.get("path", "")
        attributes: dict[str, Any] = {
            "http.request.method": method,
            "url.path": path,
            "http.route": path,
            "url.scheme": scope.get("scheme", "http"),
            "network.protocol.version": scope.get("http_version", "1.1"),
        }
        if scope.get("server"):
            attributes["server.address"], attributes["server.port"] = scope["server"]
        if scope.get("client"):
            attributes["client.address"] = scope["client"][0]
        if agent:
            attributes["user_agent.original"] = agent
        request = Request(WIRES.get(path, "chat"))
        with self.tracer.start_as_current_span(
            f"{method} {path}", context=parent, kind=SpanKind.SERVER, attributes=attributes
        ) as span:
            request.server = span

            async def observe(message: MutableMapping[str, Any]) -> None:
                if message["type"] == "http.response.start":
                    # The router has matched by now: name the span by its template, not the
                    # path (/api/memory/{record_id}, not one span name per record).
                    template = getattr(scope.get("route"), "path", None)
                    if isinstance(template, str) and template != path:
                        span.update_name(f"{method} {template}")
                        span.set_attribute("http.route", template)
                    self._responded(span, request, message["status"], message.get("headers", ()))
                await send(message)

            token = REQUEST.set(request)
            try:
                await app(scope, receive, observe)
            finally:
                REQUEST.reset(token)
                request.close()

    def _responded(self, span: Span, request: Request, status: int, headers: Any) -> None:
        recalled = None
        attributes: dict[str, Any] = {"http.response.status_code": status}
        for name, value in headers:
            if name in _HEADERS:
                attributes[_HEADERS[name]] = value.decode("latin-1")
            elif name == b"x-nerve-fallback":
                attributes["nerve.fallback"] = value == b"true"
            elif name == b"x-nerve-memory" and value.isdigit():
                recalled = attributes["nerve.memory.recalled"] = int(value)
        guard = attributes.get("nerve.guard")
        if status >= 500:  # HTTP semantic conventions: a 4xx is the client's, not an error here
            attributes["error.type"] = str(status)
            span.set_status(Status(StatusCode.ERROR))
        span.set_attributes(attributes)
        request.respond(recalled, guard)

    def guarded(self, guard: str) -> None:
        """What the tool-call guard did to the stream being served ("blocked", "flagged")."""
        request = REQUEST.get()
        if request is not None:
            request.guarded(guard)

    # -- upstream attempts ---------------------------------------------------------------------

    def attempt(self, served: _Served, upstream: _Upstream) -> Attempt:
        """A CLIENT span for calling `served.target`, current for the provider's `outgoing`."""
        request = REQUEST.get()
        wire = request.wire if request is not None else "chat"
        operation, model = OPERATIONS.get(wire, "chat"), served.target.model
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": operation, "gen_ai.provider.name": upstream.protocol,
            "gen_ai.request.model": model, "nerve.provider": served.target.provider,
            "nerve.route": served.route, "nerve.fallback": served.fallback,
        }  # fmt: skip
        if served.decided_by is not None:
            attributes["nerve.router.layer"] = served.decided_by
        host, port = self._server_of(upstream.base_url)
        if host is not None:
            attributes["server.address"] = host
        if port is not None:
            attributes["server.port"] = port
        span = self.tracer.start_span(f"{operation} {model}", kind=SpanKind.CLIENT,
                                      attributes=attributes)  # fmt: skip
        attempt = Attempt(span, request, wire, self.capture_content)
        ATTEMPT.set(attempt)  # the provider's `outgoing` reads it (same task, no reset needed)
        return attempt

    def outgoing(self, headers: Mapping[str, str], payload: Any) -> dict[str, str]:
        """`headers` with the traceparent of the attempt being sent (else of the current span),
        which also records what the request asks for."""
        attempt = ATTEMPT.get()
        context = None
        if attempt is not None and not attempt.ended:
            attempt.sent(payload)
            context = attempt.context
        carrier = dict(headers)
        self.propagator.inject(carrier, context=context)
        return carrier

    def _server_of(self, base_url: str) -> tuple[str | None, int | None]:
        known = self._servers.get(base_url)
        if known is None:
            parts = urlsplit(base_url)
            port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
            known = self._servers[base_url] = (parts.hostname, port)
        return known

    # -- spans of nerve's own calls (traced.py) ------------------------------------------------

    async def run(
        self, name: str, describe: Describe, arguments: Mapping[str, Any],
        call: Coroutine[Any, Any, R],
    ) -> R:  # fmt: skip
        """Await `call` inside an INTERNAL span `name`, described when it returns or raises."""
        with self.tracer.start_as_current_span(
            name, record_exception=False, set_status_on_exception=False
        ) as span:
            try:
                result = await call
            except BaseException as e:
                span.set_attributes(describe(arguments, None, self.capture_content))
                span.set_attribute("error.type", type(e).__name__)
                span.set_status(Status(StatusCode.ERROR, str(e) or None))
                raise
            if span.is_recording():
                attributes = describe(arguments, result, self.capture_content)
                span.set_attributes(attributes)
                if "error.type" in attributes:  # a failure returned as data (a tool's is_error)
                    span.set_status(Status(StatusCode.ERROR))
            return result

    # -- lifecycle -----------------------------------------------------------------------------

    def flush(self, timeout_s: float = 10) -> bool:
        """Export every span ended so far (blocking); False if that took too long."""
        return self.provider.force_flush(int(timeout_s * 1000))

    def shutdown(self) -> None:
        self.provider.force_flush(10_000)
        self.provider.shutdown()
