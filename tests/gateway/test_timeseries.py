"""The admin charts' time series in process (gateway/timeseries.py): minute buckets, the 24 h
bound, the cap on names, percentiles from the summable histogram, drain/absorb for Redis."""

from __future__ import annotations

import math

import pytest

from nerve.gateway.resilience import ManualClock
from nerve.gateway.stats import Stats, Usage
from nerve.gateway.timeseries import BINS, Cell, TimeSeries, bin_of


def record(stats: Stats, *, latency: float = 0.1, ok: bool = True, route: str = "default",
           model: str = "m1", fallback: bool = False) -> None:  # fmt: skip
    usage = Usage(prompt_tokens=100, completion_tokens=50, total_tokens=150)
    stats.record(route=route, provider="p", model=model, ok=ok, latency_s=latency,
                 usage=usage, fallback=fallback, error=None if ok else "boom")  # fmt: skip


def test_bins_are_log_spaced_and_bounded() -> None:
    assert bin_of(0.0) == bin_of(0.0009) == 0
    assert bin_of(0.001) == 1 and bin_of(0.002) == 5  # 4 bins per doubling
    assert bin_of(1e6) == BINS - 1 and bin_of(math.inf) == bin_of(math.nan) == BINS - 1


@pytest.mark.parametrize("ms", [3.0, 42.0, 180.0, 2500.0])
def test_a_quantile_is_within_a_bin_of_the_truth(ms: float) -> None:
    cell = Cell()
    cell.hist[bin_of(ms / 1000)] = 1
    estimate = cell.quantile_ms(0.5)
    assert estimate is not None and abs(estimate / ms - 1) < 0.1


def test_p50_and_p95_over_a_minute_and_summed_minutes() -> None:
    clock = ManualClock(start=6000.0)
    stats = Stats(clock=clock)
    for _ in range(90):
        record(stats, latency=0.010)
    clock.advance(60)
    for _ in range(10):
        record(stats, latency=1.0)
    record(stats, ok=False, latency=30.0, fallback=True)  # failures are counted, not sampled
    minutes = stats.timeseries.local(0)
    first, second = (minutes[m][("all", "")] for m in sorted(minutes))
    assert (second.calls, second.errors, second.fallbacks, second.tokens) == (11, 1, 1, 1650)
    merged = Cell()
    merged.merge(first)
    merged.merge(second)
    assert merged.calls == 101 and merged.quantile_ms(0.5) == pytest.approx(10, rel=0.1)
    assert merged.quantile_ms(0.95) == pytest.approx(1000, rel=0.1)
    assert Cell().quantile_ms(0.5) is None


def test_only_the_last_24h_of_minutes_are_kept() -> None:
    clock = ManualClock(start=0.0)
    series = TimeSeries(clock=clock)
    for _ in range(1500):
        series.add("r", "p/m", True, 0.01, 1, 0.0, False)
        clock.advance(60)
    minutes = series.local(0)
    assert len(minutes) == 1440 and min(minutes) == 1500 - 1440


def test_names_past_the_cap_count_under_other() -> None:
    series = TimeSeries(clock=ManualClock(), max_names=2)
    for i in range(5):
        series.add(f"route{i}", f"p/model{i}", True, 0.01, 1, 0.0, False)
    (cells,) = series.local(0).values()
    assert len(cells) == 1 + 2 * 2 + 2  # "all", the cap, then each dimension's "(other)"
    assert cells[("route", "(other)")].calls + cells[("model", "(other)")].calls == 10 - 4
    assert sum(c.calls for (dim, _), c in cells.items() if dim == "route") == 5


def test_drain_hands_over_and_absorb_takes_back() -> None:
    clock = ManualClock()
    series = TimeSeries(clock=clock)
    series.add("r", "p/m", True, 0.01, 5, 0.5, False)
    drained = series.drain()
    assert series.local(0) == {}
    series.add("r", "p/m", False, 0.0, 0, 0.0, False)
    series.absorb(drained)
    (cells,) = series.local(0).values()
    total = cells[("all", "")]
    assert (total.calls, total.errors, total.tokens, total.cost) == (2, 1, 5, 0.5)
    series.add("r", "p/m", True, 0.01, 1, 0.0, False)  # lands in the absorbed minute's cells
    assert series.local(0)[int(clock() // 60)][("all", "")].calls == 3


async def test_the_view_fills_empty_buckets_and_sorts_series() -> None:
    clock = ManualClock(start=3600.0 * 100)
    series = TimeSeries(clock=clock)
    series.add("b", "p/m", True, 0.01, 1, 0.25, False)
    series.add("a", "p/m", True, 0.01, 1, 0.25, False)
    data = await series.view("1h", "route")
    assert list(data["series"]) == ["a", "b"]
    assert data["total"]["cost_usd"][-1] == 0.5 and data["total"]["cost_usd"][0] == 0
    assert data["timestamps"][-1] == 3600 * 100 and data["total"]["p50_ms"][0] is None
