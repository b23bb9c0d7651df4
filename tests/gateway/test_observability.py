"""/health, /stats, /stats/reset, /cost-performance and /metrics after real traffic."""

from __future__ import annotations

import re

import httpx
import pytest

from tests.conftest import make_config
from tests.fakes.upstream import Reply

MSG = [{"role": "user", "content": "hello"}]
USAGE = {
    "prompt_tokens": 1000,
    "completion_tokens": 500,
    "total_tokens": 1500,
    "completion_tokens_details": {"reasoning_tokens": 200},
}


@pytest.fixture
def server(serve, upstream, upstream2):
    config = make_config(
        {"primary": upstream, "secondary": upstream2},
        routes=[
            {
                "name": "default",
                "model": {"provider": "primary", "model": "m1"},
                "fallbacks": [{"provider": "secondary", "model": "m2"}],
            }
        ],
        prices={"primary/m1": {"input": 2.0, "output": 10.0}, "m2": {"input": 1.0, "output": 1.0}},
    )
    return serve(config)


def chat(server):
    return httpx.post(f"{server.url}/v1/chat/completions", json={"model": "auto", "messages": MSG})


def test_stats_count_calls_tokens_reasoning_and_cost_by_route_and_provider(server, upstream):
    """GW-13: tokens by route and provider incl. reasoning tokens; cost from the price table."""
    upstream.script(Reply(usage=USAGE), Reply(usage=USAGE))
    chat(server), chat(server)
    stats = httpx.get(f"{server.url}/stats").json()
    assert stats["calls"] == 2 and stats["errors"] == 0
    assert stats["tokens"] == {"prompt": 2000, "completion": 1000, "reasoning": 400, "total": 3000}
    assert stats["by_route"]["default"]["calls"] == 2
    assert stats["by_provider"]["primary"]["tokens"]["reasoning"] == 400
    # 2000 prompt tokens at $2/M + 1000 completion tokens at $10/M
    assert stats["cost_usd"] == pytest.approx(0.014)
    assert set(stats["latency_ms"]) == {"p50", "p95", "p99"}
    assert stats["latency_ms"]["p50"] > 0


def test_stats_count_errors_and_fallback_rate(server, upstream, upstream2):
    """GW-13: a fallback is counted and the failed attempt is an error of its provider."""
    upstream.script(Reply(status=500))
    chat(server), chat(server)
    stats = httpx.get(f"{server.url}/stats").json()
    assert stats["fallbacks"] == 1
    assert stats["by_provider"]["primary"]["errors"] == 1
    assert stats["by_provider"]["secondary"]["calls"] == 1


def test_stats_reset_returns_what_it_cleared(server, upstream):
    """GW-13: /stats/reset returns the previous snapshot and starts from zero (admins only)."""
    chat(server)
    assert httpx.get(f"{server.url}/stats/reset").status_code == 401
    assert httpx.get(f"{server.url}/stats").json()["calls"] == 1  # nothing was cleared
    admin = {"x-nerve-admin-token": server.app.admin.auth.issue().token}
    previous = httpx.get(f"{server.url}/stats/reset", headers=admin).json()["previous"]
    assert previous["calls"] == 1
    assert httpx.get(f"{server.url}/stats").json()["calls"] == 0


def test_cost_performance_breaks_down_routes_by_provider(server, upstream):
    """GW-13: /cost-performance per route with latency and cost."""
    upstream.script(Reply(usage=USAGE))
    chat(server)
    report = httpx.get(f"{server.url}/cost-performance").json()
    assert "default" in str(report) and "primary" in str(report)


def test_metrics_speak_prometheus_text(server, upstream):
    """GW-13: /metrics in the Prometheus exposition format."""
    chat(server)
    r = httpx.get(f"{server.url}/metrics")
    assert r.headers["content-type"].startswith("text/plain; version=0.0.4")
    lines = [line for line in r.text.splitlines() if line and not line.startswith("#")]
    sample = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})? -?[0-9.e+-]+|NaN$")
    assert lines and all(sample.match(line) for line in lines), lines
    assert any(
        line.startswith("nerve_requests_total{") and 'provider="primary"' in line for line in lines
    )


def test_health_reports_routes_providers_and_open_breakers(server, upstream, upstream2):
    """GW-13: /health: status, routes, uptime, errors; degraded when a breaker opens."""
    health = httpx.get(f"{server.url}/health").json()
    assert health["status"] == "ok" and health["routes"] == ["default"]
    upstream.script(*[Reply(status=500)] * 3)
    for _ in range(3):
        chat(server)
    health = httpx.get(f"{server.url}/health").json()
    assert health["status"] == "degraded"
    assert health["breakers_not_closed"] == ["primary/m1"]
    assert health["errors"] == 3
