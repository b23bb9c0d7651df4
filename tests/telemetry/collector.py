"""A loopback OTLP/HTTP collector: POST /v1/traces, the protobuf the exporter sends, decoded.

It speaks the receiving side of OTLP/HTTP (opentelemetry-proto's ExportTraceServiceRequest in,
an ExportTraceServiceResponse out, application/x-protobuf), so the tests read what a real
collector would be given: every span flattened with its resource's attributes.

    with Collector() as otlp:
        ...  # telemetry.otlp_endpoint: otlp.url
        spans = otlp.wait_for(lambda spans: len(spans) >= 2)
        server = otlp.one("POST /v1/chat/completions")
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span as SpanProto

from tests.fakes.loopback import Loopback

__all__ = ["Collector", "Span"]

KINDS = {SpanProto.SPAN_KIND_SERVER: "server", SpanProto.SPAN_KIND_CLIENT: "client",
         SpanProto.SPAN_KIND_INTERNAL: "internal"}  # fmt: skip


@dataclass(frozen=True)
class Span:
    name: str
    kind: str
    trace_id: str  # hex, as in a traceparent
    span_id: str
    parent_id: str  # "" for a root span
    attributes: dict[str, Any]
    resource: dict[str, Any]
    error: bool  # status ERROR
    events: tuple[str, ...]
    start_ns: int
    end_ns: int


class Collector(Loopback):
    name = "otlp"

    def __init__(self) -> None:
        super().__init__()
        self.spans: list[Span] = []
        self.posts: list[dict[str, str]] = []  # each export's headers, lower-cased
        self._cond = threading.Condition()

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/traces", self._traces)

    async def _traces(self, request: web.Request) -> web.Response:
        if request.content_type != "application/x-protobuf":
            return web.Response(status=415, text=f"not protobuf: {request.content_type}")
        export = ExportTraceServiceRequest()
        try:
            export.ParseFromString(await request.read())
        except DecodeError as e:
            return web.Response(status=400, text=str(e))
        spans = [
            _span(span, _attributes(rs.resource.attributes))
            for rs in export.resource_spans
            for ss in rs.scope_spans
            for span in ss.spans
        ]
        with self._cond:
            self.posts.append({k.lower(): v for k, v in request.headers.items()})
            self.spans.extend(spans)
            self._cond.notify_all()
        body = ExportTraceServiceResponse().SerializeToString()
        return web.Response(body=body, content_type="application/x-protobuf")

    def wait_for(self, enough: Callable[[list[Span]], bool], timeout: float = 10) -> list[Span]:
        """Block until `enough(spans)` holds for what arrived; all spans so far."""
        with self._cond:
            if not self._cond.wait_for(lambda: enough(self.spans), timeout):
                names = [s.name for s in self.spans]
                raise TimeoutError(f"the collector has {names} after {timeout}s")
            return list(self.spans)

    def named(self, name: str) -> list[Span]:
        with self._cond:
            return [s for s in self.spans if s.name == name]

    def one(self, name: str) -> Span:
        found = self.named(name)
        assert len(found) == 1, f"{len(found)} spans named {name!r}: {[s.name for s in self.spans]}"
        return found[0]


def _span(span: SpanProto, resource: dict[str, Any]) -> Span:
    return Span(
        name=span.name,
        kind=KINDS.get(span.kind, str(span.kind)),
        trace_id=span.trace_id.hex(),
        span_id=span.span_id.hex(),
        parent_id=span.parent_span_id.hex(),
        attributes=_attributes(span.attributes),
        resource=resource,
        error=span.status.code == span.status.STATUS_CODE_ERROR,
        events=tuple(e.name for e in span.events),
        start_ns=span.start_time_unix_nano,
        end_ns=span.end_time_unix_nano,
    )


def _attributes(pairs: Any) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in pairs}


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return _attributes(value.kvlist_value.values)
    return getattr(value, kind) if kind else None
