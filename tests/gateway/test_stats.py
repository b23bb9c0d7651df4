"""Gateway statistics: /stats, /stats/reset, /cost-performance, /metrics (SPEC GW-13)."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest

from nerve.config import Price
from nerve.gateway.resilience import ManualClock
from nerve.gateway.stats import Stats, Usage

USAGE = Usage(prompt_tokens=1000, completion_tokens=500, reasoning_tokens=200, total_tokens=1500)


def call(stats: Stats, **overrides: Any) -> None:
    args: dict[str, Any] = dict(
        route="default", provider="openai", model="gpt-4o", ok=True, latency_s=0.1,
        usage=USAGE, fallback=False,
    )  # fmt: skip
    stats.record(**{**args, **overrides})


def test_usage_reads_openai_usage_including_reasoning_tokens() -> None:
    """GW-13: reasoning tokens come from completion_tokens_details."""
    usage = Usage.from_openai(
        {
            "prompt_tokens": 12,
            "completion_tokens": 30,
            "total_tokens": 42,
            "completion_tokens_details": {"reasoning_tokens": 20},
        }
    )
    assert usage == Usage(
        prompt_tokens=12, completion_tokens=30, reasoning_tokens=20, total_tokens=42
    )


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, None),
        ({}, Usage()),
        ({"prompt_tokens": None, "completion_tokens_details": None}, Usage()),
        ({"prompt_tokens": 3, "completion_tokens": 4}, Usage(3, 4, 0, 7)),
        ({"prompt_tokens": "3", "completion_tokens": True, "total_tokens": -1}, Usage()),
    ],
)
def test_usage_tolerates_missing_and_odd_fields(raw: Any, expected: Usage | None) -> None:
    """GW-13: upstreams omit or null usage fields; the count is 0, never an exception."""
    assert Usage.from_openai(raw) == expected


def test_calls_errors_and_tokens_are_counted_by_route_provider_and_model() -> None:
    """GW-13: calls and tokens by route and provider, reasoning tokens, fallback rate."""
    stats = Stats(clock=ManualClock())
    call(stats)
    call(stats, route="code", provider="claude", model="sonnet", fallback=False)
    call(stats, route="code", ok=False, usage=None, error="upstream_500")
    call(stats, route="code", fallback=True)

    snap = stats.snapshot()
    assert (snap["calls"], snap["errors"], snap["fallbacks"]) == (4, 1, 1)
    assert snap["fallback_rate"] == 0.25
    assert snap["tokens"] == {"prompt": 3000, "completion": 1500, "reasoning": 600, "total": 4500}
    assert snap["by_route"]["code"]["calls"] == 3
    assert snap["by_route"]["code"]["errors"] == 1
    assert snap["by_route"]["default"]["tokens"]["reasoning"] == 200
    assert snap["by_provider"]["openai"]["calls"] == 3
    assert snap["by_provider"]["openai"]["last_error"] == "upstream_500"
    assert snap["by_model"]["claude/sonnet"]["tokens"]["total"] == 1500
    assert set(snap["by_model"]) == {"openai/gpt-4o", "claude/sonnet"}


def test_cost_comes_from_the_price_table_and_provider_model_beats_model() -> None:
    """GW-13: cost in USD per million tokens; "provider/model" prices win over "model" ones."""
    prices = {
        "gpt-4o": Price(input=2.5, output=10),
        "openai/gpt-4o": Price(input=5, output=20),
    }
    stats = Stats(prices=prices, clock=ManualClock())
    call(stats, provider="openai")  # 1000 x 5 + 500 x 20 per million
    call(stats, provider="azure")  # 1000 x 2.5 + 500 x 10 per million
    call(stats, provider="local", model="llama3")  # no price: free

    snap = stats.snapshot()
    assert snap["by_model"]["openai/gpt-4o"]["cost_usd"] == pytest.approx(0.015)
    assert snap["by_model"]["azure/gpt-4o"]["cost_usd"] == pytest.approx(0.0075)
    assert snap["by_model"]["local/llama3"]["cost_usd"] == 0
    assert snap["cost_usd"] == pytest.approx(0.0225)


def test_latency_percentiles_come_from_answered_calls() -> None:
    """GW-13: p50/p95/p99 in milliseconds; a failed call counts but is not a latency sample."""
    stats = Stats(clock=ManualClock())
    latencies = [ms / 1000 for ms in range(1, 101)]
    random.Random(7).shuffle(latencies)
    for latency in latencies:
        call(stats, latency_s=latency)
    call(stats, ok=False, latency_s=60.0, usage=None)

    snap = stats.snapshot()
    assert snap["latency_ms"] == {"p50": 50, "p95": 95, "p99": 99}
    assert snap["by_route"]["default"]["latency_ms"]["p95"] == 95
    empty = Stats(clock=ManualClock()).snapshot()["latency_ms"]
    assert empty == {"p50": None, "p95": None, "p99": None}


def test_percentiles_cover_the_last_1024_samples_only() -> None:
    """GW-13: a bounded reservoir per series: old latencies age out."""
    stats = Stats(clock=ManualClock())
    for _ in range(1024):
        call(stats, latency_s=10.0)
    for _ in range(1024):
        call(stats, latency_s=0.002)
    assert stats.snapshot()["latency_ms"]["p99"] == 2


def test_rejections_are_counted_by_reason() -> None:
    """GW-13/GW-15: refused requests are visible by reason."""
    stats = Stats(clock=ManualClock())
    for reason in ("burst", "burst", "window", "bad_request"):
        stats.record_rejection(reason)
    assert stats.snapshot()["rejections"] == {"burst": 2, "window": 1, "bad_request": 1}


def test_snapshot_is_json_ready_and_carries_breakers_and_cooldowns() -> None:
    """GW-13: /stats shows breaker states and cooldowns next to the counters."""
    clock = ManualClock()
    stats = Stats(clock=clock)
    call(stats)
    clock.advance(12)
    snap = stats.snapshot(breakers={"openai/gpt-4o": {"state": "open"}}, cooldowns={"a/x": 3.0})
    assert json.loads(json.dumps(snap, allow_nan=False)) == snap
    assert snap["uptime_s"] == 12
    assert snap["breakers"] == {"openai/gpt-4o": {"state": "open"}}
    assert snap["cooldowns"] == {"a/x": 3.0}


def test_reset_returns_the_previous_snapshot_and_counts_from_zero() -> None:
    """GW-13: /stats/reset returns what it cleared; uptime keeps running."""
    clock = ManualClock()
    stats = Stats(clock=clock)
    call(stats)
    stats.record_rejection("burst")
    clock.advance(5)

    previous = stats.reset()
    assert previous["calls"] == 1
    assert previous["rejections"] == {"burst": 1}
    clock.advance(1)
    now = stats.snapshot()
    assert (now["calls"], now["by_route"], now["rejections"], now["cost_usd"]) == (0, {}, {}, 0)
    assert now["tokens"]["total"] == 0
    assert (now["uptime_s"], now["since_reset_s"]) == (6, 1)


def test_cost_performance_breaks_routes_down_by_provider() -> None:
    """GW-13: /cost-performance: success rate, latency, tokens, cost and cost per 1K tokens."""
    stats = Stats(prices={"gpt-4o": Price(input=2, output=4)}, clock=ManualClock())
    call(stats, latency_s=0.2)
    call(stats, latency_s=0.4)
    call(stats, provider="claude", model="sonnet", ok=False, usage=None)
    call(stats, provider="claude", model="sonnet", fallback=True)

    route = stats.cost_performance()["routes"]["default"]
    assert route["calls"] == 4
    assert route["success_rate"] == 0.75
    assert route["cost_usd"] == pytest.approx(0.008)
    assert route["cost_per_1k_tokens"] == pytest.approx(0.008 / 4.5)
    openai = route["providers"]["openai"]
    assert (openai["calls"], openai["success_rate"]) == (2, 1.0)
    assert openai["latency_ms"] == {"p50": 200, "p95": 400, "p99": 400}
    assert openai["cost_per_1k_tokens"] == pytest.approx(0.008 / 3)
    assert route["providers"]["claude"]["success_rate"] == 0.5
    assert route["providers"]["claude"]["cost_per_1k_tokens"] == 0


def test_series_are_capped_so_client_chosen_names_cannot_grow_memory() -> None:
    """GW-13: past 1000 models, new names are counted together under "(other)"."""
    stats = Stats(clock=ManualClock())
    for i in range(1100):
        call(stats, model=f"m{i}")
    by_model = stats.snapshot()["by_model"]
    assert len(by_model) == 1001
    assert by_model["(other)"]["calls"] == 100


# --- Prometheus text exposition format 0.0.4 --------------------------------------------------

_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_SAMPLE = re.compile(rf"(?P<name>{_NAME})(?:\{{(?P<labels>.*)\}})? (?P<value>\S+)")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(?:,|$)')
_UNESCAPE = {"n": "\n", "\\": "\\", '"': '"'}


def parse_prometheus(text: str) -> list[tuple[str, dict[str, str], float]]:
    """Check the exposition line by line; return the samples with label values unescaped."""
    assert text.endswith("\n")
    samples: list[tuple[str, dict[str, str], float]] = []
    seen: set[str] = set()
    helped = family = kind = None
    for line in text.splitlines():
        if line.startswith("# HELP "):
            helped = line.split(" ", 3)[2]
            assert helped not in seen, f"family {helped} appears twice"
            seen.add(helped)
            family = None
        elif line.startswith("# TYPE "):
            _, _, family, kind = line.split(" ")
            assert family == helped, f"TYPE {family} not right after its HELP"
            assert kind in ("counter", "gauge", "summary", "histogram", "untyped")
        else:
            match = _SAMPLE.fullmatch(line)
            assert match, f"not a sample line: {line!r}"
            assert family is not None, f"sample before HELP/TYPE: {line!r}"
            name = match["name"]
            suffixes = ("_sum", "_count", "_bucket") if kind in ("summary", "histogram") else ()
            assert name == family or name in {family + s for s in suffixes}, line
            labels, raw, pos = {}, match["labels"] or "", 0
            while pos < len(raw):
                label = _LABEL.match(raw, pos)
                assert label, f"bad labels in {line!r}"
                labels[label[1]] = re.sub(r"\\(.)", lambda m: _UNESCAPE[m[1]], label[2])
                pos = label.end()
            samples.append((name, labels, float(match["value"])))
    return samples


def value(samples: list[tuple[str, dict[str, str], float]], name: str, **labels: str) -> float:
    found = [v for n, ls, v in samples if n == name and labels.items() <= ls.items()]
    assert len(found) == 1, (name, labels, found)
    return found[0]


def test_prometheus_text_parses_line_by_line_with_escaped_label_values() -> None:
    """GW-13: /metrics in the Prometheus text format, every family with HELP and TYPE first."""
    clock = ManualClock()
    stats = Stats(prices={"gpt-4o": Price(input=1, output=1)}, clock=clock)
    odd = 'we"ird\\model\nv2'
    call(stats, latency_s=0.25)
    call(stats, ok=False, usage=None)
    call(stats, route="code", provider="claude", model=odd, fallback=True)
    stats.record_rejection("window")
    clock.advance(3)
    text = stats.prometheus(breakers={"openai/gpt-4o": "open", f"claude/{odd}": "half_open"})

    samples = parse_prometheus(text)
    total = "nerve_requests_total"
    assert value(samples, total, route="default", provider="openai", outcome="ok") == 1
    assert value(samples, total, route="default", provider="openai", outcome="error") == 1
    assert value(samples, total, route="code", model=odd, outcome="ok") == 1
    tokens = "nerve_tokens_total"
    assert value(samples, tokens, route="default", provider="openai", kind="prompt") == 1000
    assert value(samples, tokens, route="code", provider="claude", kind="reasoning") == 200
    assert value(samples, "nerve_cost_usd_total", route="default") == pytest.approx(0.0015)
    latency = "nerve_request_latency_seconds"
    assert value(samples, latency, route="default", quantile="0.5") == 0.25
    assert value(samples, latency + "_count", route="default") == 1
    assert value(samples, latency + "_sum", route="default") == 0.25
    assert value(samples, "nerve_fallbacks_total", route="code") == 1
    assert value(samples, "nerve_rejections_total", reason="window") == 1
    assert value(samples, "nerve_breaker_state", key="openai/gpt-4o") == 2
    assert value(samples, "nerve_breaker_state", key=f"claude/{odd}") == 1
    assert value(samples, "nerve_uptime_seconds") == 3
    assert 'model="we\\"ird\\\\model\\nv2"' in text


def test_prometheus_text_is_valid_before_any_call() -> None:
    """GW-13: an idle gateway still exposes every family's HELP and TYPE."""
    text = Stats(clock=ManualClock()).prometheus()
    samples = parse_prometheus(text)
    assert [name for name, _, _ in samples] == ["nerve_uptime_seconds"]
    assert text.count("# TYPE ") == 9


def test_traffic_events_are_counted_apart_from_rejections_and_survive_a_drain() -> None:
    """SPEC TP: what the guard and path memory did, kept as `part:event` beside the rejections
    (so replicas share them as they share rejections) but shown apart from them."""
    stats = Stats(clock=ManualClock())
    stats.record_rejection("window")
    stats.record_traffic("guard", "blocked")
    stats.record_traffic("guard", "blocked", 2)
    stats.record_traffic("memory", "recalled", 5)
    snap = stats.snapshot()
    assert snap["rejections"] == {"window": 1}
    assert snap["traffic"] == {"guard": {"blocked": 3}, "memory": {"recalled": 5}}
    samples = parse_prometheus(stats.prometheus())
    assert value(samples, "nerve_traffic_events_total", part="guard", event="blocked") == 3
    assert value(samples, "nerve_rejections_total", reason="window") == 1
    assert not any(n == "nerve_rejections_total" and "guard" in str(labels)
                   for n, labels, _ in samples)  # fmt: skip
    moved = Stats.from_counters(stats.drain(), clock=ManualClock(), started=0, since=0)
    assert moved.snapshot()["traffic"] == snap["traffic"] and stats.snapshot()["traffic"] == {}


def test_drain_hands_over_the_counts_and_absorb_or_from_counters_take_them_back() -> None:
    """GW-19: the local Stats as a delta buffer: drained counts leave it, a failed push returns
    them, and a view built from counters shows the same numbers."""
    clock = ManualClock()
    stats = Stats(clock=clock)
    call(stats, latency_s=0.2)
    call(stats, route="code", ok=False, error="UpstreamTimeout")
    stats.record_rejection("burst")
    before = stats.snapshot()
    counters = stats.drain()
    assert stats.snapshot()["calls"] == 0 and stats.snapshot()["rejections"] == {}
    call(stats, latency_s=0.4)
    stats.absorb(counters)
    after = stats.snapshot()
    assert (after["calls"], after["errors"], after["rejections"]) == (3, 1, {"burst": 1})
    assert after["by_route"]["code"]["last_error"] == "UpstreamTimeout"
    assert after["latency_ms"]["p50"] == 200.0 and after["latency_ms"]["p99"] == 400.0
    view = Stats.from_counters(counters, clock=clock, started=clock() - 5, since=clock() - 2)
    snap = view.snapshot()
    assert {k: snap[k] for k in ("calls", "errors", "tokens", "by_route", "rejections")} == {
        k: before[k] for k in ("calls", "errors", "tokens", "by_route", "rejections")
    }
    assert (snap["uptime_s"], snap["since_reset_s"]) == (5, 2)
