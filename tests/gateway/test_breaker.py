"""Circuit breakers per provider/model (SPEC GW-7), driven by a ManualClock."""

from __future__ import annotations

import asyncio
import json

from nerve.config import BreakerConfig
from nerve.gateway.resilience import Breakers, ManualClock

KEY = "openai/gpt-4o-mini"


async def _trip(breakers: Breakers, key: str = KEY, times: int = 3) -> None:
    for _ in range(times):
        await breakers.record_failure(key)


async def test_the_breaker_runs_its_full_cycle_closed_open_half_open_closed() -> None:
    """GW-7: open after 3 consecutive failures, skipped while open, one probe after 60 s, closed
    again after a successful probe; a failed probe re-opens with a fresh timer."""
    clock = ManualClock()
    breakers = Breakers(failures=3, half_open_after=60, clock=clock)

    await _trip(breakers, times=2)
    assert breakers.state(KEY) == "closed"
    assert await breakers.allow(KEY)
    await breakers.record_failure(KEY)
    assert breakers.state(KEY) == "open"
    assert not await breakers.allow(KEY)

    clock.advance(59.9)
    assert not await breakers.allow(KEY)
    clock.advance(0.1)
    assert breakers.state(KEY) == "half_open"
    probes = await asyncio.gather(breakers.allow(KEY), breakers.allow(KEY))
    assert sorted(probes) == [False, True]

    await breakers.record_failure(KEY)  # the probe failed: open again, timer restarted
    assert breakers.state(KEY) == "open"
    clock.advance(59)
    assert not await breakers.allow(KEY)
    clock.advance(1)
    assert await breakers.allow(KEY)
    await breakers.record_success(KEY)
    assert breakers.state(KEY) == "closed"
    assert await breakers.allow(KEY)
    assert await breakers.allow(KEY)


async def test_with_two_successes_to_close_the_probes_go_one_at_a_time() -> None:
    """GW-7: successes_to_close is configurable; each half-open success frees the next probe."""
    clock = ManualClock()
    breakers = Breakers(failures=1, half_open_after=10, successes_to_close=2, clock=clock)
    await breakers.record_failure(KEY)
    clock.advance(10)

    assert await breakers.allow(KEY)
    assert not await breakers.allow(KEY)
    await breakers.record_success(KEY)
    assert breakers.state(KEY) == "half_open"
    assert await breakers.allow(KEY)
    assert not await breakers.allow(KEY)
    await breakers.record_success(KEY)
    assert breakers.state(KEY) == "closed"


async def test_a_failure_after_one_of_two_probe_successes_reopens() -> None:
    """GW-7: half-open successes do not survive a failed probe."""
    clock = ManualClock()
    breakers = Breakers(failures=1, half_open_after=10, successes_to_close=2, clock=clock)
    await breakers.record_failure(KEY)
    clock.advance(10)
    assert await breakers.allow(KEY)
    await breakers.record_success(KEY)
    assert await breakers.allow(KEY)
    await breakers.record_failure(KEY)
    assert breakers.state(KEY) == "open"
    clock.advance(10)
    assert await breakers.allow(KEY)
    await breakers.record_success(KEY)
    assert breakers.state(KEY) == "half_open"


async def test_release_frees_the_probe_slot_without_changing_state() -> None:
    """GW-7: a probe cancelled by its client neither closes nor re-opens the breaker."""
    clock = ManualClock()
    breakers = Breakers(failures=1, half_open_after=5, clock=clock)
    await breakers.record_failure(KEY)
    clock.advance(5)
    assert await breakers.allow(KEY)
    assert not await breakers.allow(KEY)

    await breakers.release(KEY)
    assert breakers.state(KEY) == "half_open"
    assert await breakers.allow(KEY)
    assert not await breakers.allow(KEY)


async def test_release_on_a_closed_breaker_changes_nothing() -> None:
    """GW-7: releasing an ordinary call is harmless."""
    breakers = Breakers(failures=2, clock=ManualClock())
    await breakers.record_failure(KEY)
    await breakers.release(KEY)
    await breakers.record_failure(KEY)
    assert breakers.state(KEY) == "open"


async def test_a_success_resets_the_consecutive_failure_count() -> None:
    """GW-7: only *consecutive* failures open the breaker."""
    breakers = Breakers(failures=3, clock=ManualClock())
    for _ in range(5):
        await _trip(breakers, times=2)
        await breakers.record_success(KEY)
    assert breakers.state(KEY) == "closed"
    await _trip(breakers, times=3)
    assert breakers.state(KEY) == "open"


async def test_a_probe_that_never_reports_is_presumed_lost_after_the_probe_timeout() -> None:
    """GW-7: a probe whose task died cannot leave the breaker half-open and shut forever."""
    clock = ManualClock()
    breakers = Breakers(failures=1, half_open_after=60, probe_timeout=30, clock=clock)
    await breakers.record_failure(KEY)
    clock.advance(60)
    assert await breakers.allow(KEY)
    clock.advance(29)
    assert not await breakers.allow(KEY)
    clock.advance(1)
    assert await breakers.allow(KEY)


async def test_late_results_while_open_neither_close_nor_extend_the_timer() -> None:
    """GW-7: calls admitted before the trip may finish after it; only a probe decides."""
    clock = ManualClock()
    breakers = Breakers(failures=1, half_open_after=60, clock=clock)
    await breakers.record_failure(KEY)
    clock.advance(30)
    await breakers.record_success(KEY)
    await breakers.record_failure(KEY)
    assert breakers.state(KEY) == "open"
    clock.advance(30)
    assert await breakers.allow(KEY)


async def test_breakers_are_independent_per_key() -> None:
    """GW-7: one failing model does not open another's breaker."""
    breakers = Breakers(failures=1, clock=ManualClock())
    await breakers.record_failure("a/x")
    assert breakers.state("a/x") == "open"
    assert breakers.state("b/y") == "closed"
    assert await breakers.allow("b/y")


async def test_snapshot_is_json_ready_and_lists_breakers_with_a_story() -> None:
    """GW-13: breaker states appear in /stats."""
    clock = ManualClock()
    breakers = Breakers(failures=2, half_open_after=60, clock=clock)
    await breakers.record_failure("a/x")
    await _trip(breakers, "b/y", times=2)
    clock.advance(15)
    snap = json.loads(json.dumps(breakers.snapshot()))
    assert snap["a/x"]["state"] == "closed"
    assert snap["a/x"]["consecutive_failures"] == 1
    assert snap["b/y"]["state"] == "open"
    assert snap["b/y"]["opened_at_ago_s"] == 15
    assert snap["b/y"]["half_open_in_s"] == 45
    await breakers.record_success("a/x")
    assert "a/x" not in breakers.snapshot()


def test_from_config_reads_the_breaker_section() -> None:
    """GW-7: failures, half-open delay and successes to close are configurable."""
    cfg = BreakerConfig(failures=5, half_open_after_seconds=7, successes_to_close=2)
    breakers = Breakers.from_config(cfg, clock=ManualClock())
    assert (breakers.failures, breakers.half_open_after, breakers.successes_to_close) == (5, 7, 2)
