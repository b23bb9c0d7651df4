"""Traces end to end (SPEC OB-1): a nerve app under a real uvicorn server exporting to a
loopback OTLP/HTTP collector, with the real OpenAI/Anthropic SDKs as clients.

    otlp                  the Collector (tests/telemetry/collector.py), up for the whole test
    traced(upstreams, routes=None, **telemetry)   a RunningServer exporting to `otlp`
    client_traceparent    a W3C traceparent a client would send: (header, trace id, span id)

A test sends its requests, then `server.stop()`: the lifespan's shutdown flushes every span,
so what the collector holds afterwards is all there will be (no waiting on timers).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from nerve.config import Config
from tests.conftest import RunningServer, make_config
from tests.fakes.upstream import FakeUpstream
from tests.telemetry.collector import Collector

Traced = Callable[..., RunningServer]


@pytest.fixture
def otlp() -> Iterator[Collector]:
    with Collector() as collector:
        yield collector


@pytest.fixture
def traced(otlp: Collector, serve: Callable[[Config], RunningServer]) -> Traced:
    """Set up after `otlp`, so servers stop (and flush) before the collector does."""

    def start(
        upstreams: dict[str, FakeUpstream], routes: list[dict[str, Any]] | None = None,
        extra: dict[str, Any] | None = None, **telemetry: Any,
    ) -> RunningServer:  # fmt: skip
        settings = {"otlp_endpoint": otlp.url, **telemetry}
        return serve(make_config(upstreams, routes, telemetry=settings, **(extra or {})))

    return start


@pytest.fixture
def client_traceparent() -> tuple[str, str, str]:
    trace_id, span_id = os.urandom(16).hex(), os.urandom(8).hex()
    return f"00-{trace_id}-{span_id}-01", trace_id, span_id
