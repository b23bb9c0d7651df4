"""Circuit breakers per provider/model (SPEC GW-7, GW-19), driven by a ManualClock.

Every scenario runs against each implementation of `BreakersSeam` (implementations.py): the
in-process `Breakers` and its Redis twin, same assertions, same semantics.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest

from nerve.config import BreakerConfig
from nerve.gateway.resilience import Breakers, BreakersSeam, ManualClock
from tests.gateway.implementations import IMPLEMENTATIONS, implementation

KEY = "openai/gpt-4o-mini"
# Breakers of each kind with cooldowns of each kind, but one process has one shared state.
PAIRS = [
    (b, c) for b in IMPLEMENTATIONS for c in IMPLEMENTATIONS if {b, c} != {"shared", "shared-down"}
]
Make = Callable[..., Any]


@pytest.fixture(params=IMPLEMENTATIONS)
def make(request: pytest.FixtureRequest, clock: ManualClock) -> Make:
    return implementation(request, clock, "breakers")


@pytest.fixture(params=IMPLEMENTATIONS)
def make_cooldowns(request: pytest.FixtureRequest, clock: ManualClock) -> Make:
    return implementation(request, clock, "cooldowns")


async def _trip(breakers: BreakersSeam, key: str = KEY, times: int = 3) -> None:
    for _ in range(times):
        await breakers.record_failure(key)


async def test_the_breaker_runs_its_full_cycle_closed_open_half_open_closed(
    make: Make, clock: ManualClock
) -> None:
    """GW-7: open after 3 consecutive failures, skipped while open, one probe after 60 s, closed
    again after a successful probe; a failed probe re-opens with a fresh timer."""
    breakers = make(failures=3, half_open_after=60)

    await _trip(breakers, times=2)
    assert await breakers.state(KEY) == "closed"
    assert await breakers.allow(KEY)
    await breakers.record_failure(KEY)
    assert await breakers.state(KEY) == "open"
    assert not await breakers.allow(KEY)

    clock.advance(59.9)
    assert not await breakers.allow(KEY)
    clock.advance(0.1)
    assert await breakers.state(KEY) == "half_open"
    probes = await asyncio.gather(breakers.allow(KEY), breakers.allow(KEY))
    assert sorted(probes) == [False, True]

    await breakers.record_failure(KEY)  # the probe failed: open again, timer restarted
    assert await breakers.state(KEY) == "open"
    clock.advance(59)
    assert not await breakers.allow(KEY)
    clock.advance(1)
    assert await breakers.allow(KEY)
    await breakers.record_success(KEY)
    assert await breakers.state(KEY) == "closed"
    assert await breakers.allow(KEY)
    assert await breakers.allow(KEY)
    assert await breakers.view() == {}


async def test_with_two_successes_to_close_the_probes_go_one_at_a_time(
    make: Make, clock: ManualClock
) -> None:
    """GW-7: successes_to_close is configurable; each half-open success frees the next probe."""
    breakers = make(failures=1, half_open_after=10, successes_to_close=2)
    await breakers.record_failure(KEY)
    clock.advance(10)

    assert await breakers.allow(KEY)
    assert not await breakers.allow(KEY)
    await breakers.record_success(KEY)
    assert await breakers.state(KEY) == "half_open"
    view = (await breakers.view())[KEY]
    assert view["probe_successes"] == 1 and view["probe_in_flight"] is False
    assert await breakers.allow(KEY)
    assert not await breakers.allow(KEY)
    await breakers.record_success(KEY)
    assert await breakers.state(KEY) == "closed"


async def test_a_failure_after_one_of_two_probe_successes_reopens(
    make: Make, clock: ManualClock
) -> None:
    """GW-7: half-open successes do not survive a failed probe."""
    breakers = make(failures=1, half_open_after=10, successes_to_close=2)
    await breakers.record_failure(KEY)
    clock.advance(10)
    assert await breakers.allow(KEY)
    await breakers.record_success(KEY)
    assert await breakers.allow(KEY)
    await breakers.record_failure(KEY)
    assert await breakers.state(KEY) == "open"
    clock.advance(10)
    assert await breakers.allow(KEY)
    await breakers.record_success(KEY)
    assert await breakers.state(KEY) == "half_open"


async def test_release_frees_the_probe_slot_without_changing_state(
    make: Make, clock: ManualClock
) -> None:
    """GW-7: a probe cancelled by its client neither closes nor re-opens the breaker."""
    breakers = make(failures=1, half_open_after=5)
    await breakers.record_failure(KEY)
    clock.advance(5)
    assert await breakers.allow(KEY)
    assert not await breakers.allow(KEY)

    await breakers.release(KEY)
    assert await breakers.state(KEY) == "half_open"
    assert await breakers.allow(KEY)
    assert not await breakers.allow(KEY)


async def test_release_on_a_closed_breaker_changes_nothing(make: Make, clock: ManualClock) -> None:
    """GW-7: releasing an ordinary call is harmless."""
    breakers = make(failures=2)
    await breakers.record_failure(KEY)
    await breakers.release(KEY)
    await breakers.record_failure(KEY)
    assert await breakers.state(KEY) == "open"


async def test_a_success_resets_the_consecutive_failure_count(
    make: Make, clock: ManualClock
) -> None:
    """GW-7: only *consecutive* failures open the breaker."""
    breakers = make(failures=3)
    for _ in range(5):
        await _trip(breakers, times=2)
        await breakers.record_success(KEY)
    assert await breakers.state(KEY) == "closed"
    await _trip(breakers, times=3)
    assert await breakers.state(KEY) == "open"


async def test_a_probe_that_never_reports_is_presumed_lost_after_the_probe_timeout(
    make: Make, clock: ManualClock
) -> None:
    """GW-7: a probe whose task died cannot leave the breaker half-open and shut forever."""
    breakers = make(failures=1, half_open_after=60, probe_timeout=30)
    await breakers.record_failure(KEY)
    clock.advance(60)
    assert await breakers.allow(KEY)
    clock.advance(29)
    assert not await breakers.allow(KEY)
    clock.advance(1)
    assert await breakers.allow(KEY)


async def test_late_results_while_open_neither_close_nor_extend_the_timer(
    make: Make, clock: ManualClock
) -> None:
    """GW-7: calls admitted before the trip may finish after it; only a probe decides."""
    breakers = make(failures=1, half_open_after=60)
    await breakers.record_failure(KEY)
    clock.advance(30)
    await breakers.record_success(KEY)
    await breakers.record_failure(KEY)
    assert await breakers.state(KEY) == "open"
    clock.advance(30)
    assert await breakers.allow(KEY)


async def test_breakers_are_independent_per_key(make: Make, clock: ManualClock) -> None:
    """GW-7: one failing model does not open another's breaker."""
    breakers = make(failures=1)
    await breakers.record_failure("a/x")
    assert await breakers.state("a/x") == "open"
    assert await breakers.state("b/y") == "closed"
    assert await breakers.allow("b/y")


async def test_the_view_is_json_ready_and_lists_breakers_with_a_story(
    make: Make, clock: ManualClock
) -> None:
    """GW-13: breaker states appear in /stats; pristine keys are absent."""
    breakers = make(failures=2, half_open_after=60)
    await breakers.record_failure("a/x")
    await _trip(breakers, "b/y", times=2)
    clock.advance(15)
    snap = json.loads(json.dumps(await breakers.view()))
    assert snap["a/x"]["state"] == "closed"
    assert snap["a/x"]["consecutive_failures"] == 1
    assert snap["b/y"]["state"] == "open"
    assert snap["b/y"]["opened_at_ago_s"] == 15
    assert snap["b/y"]["half_open_in_s"] == 45
    await breakers.record_success("a/x")
    assert set(await breakers.view()) == {"b/y"}


async def test_a_probe_success_keeps_a_closed_breakers_call_failures(
    make: Make, clock: ManualClock
) -> None:
    """A model list that answers says nothing of chat: it closes a half-open breaker, but the
    consecutive call failures of a closed one stand, and the next one opens it."""
    breakers = make(failures=3, half_open_after=10)
    await _trip(breakers, times=2)
    await breakers.record_success(KEY, probe=True)
    assert (await breakers.view())[KEY]["consecutive_failures"] == 2
    await breakers.record_failure(KEY)
    assert await breakers.state(KEY) == "open"
    clock.advance(10)
    assert await breakers.allow(KEY)
    await breakers.record_success(KEY, probe=True)
    assert await breakers.state(KEY) == "closed" and await breakers.view() == {}


@pytest.mark.parametrize(("make", "make_cooldowns"), PAIRS, indirect=True)
async def test_the_gate_answers_cooldown_and_breaker_in_one_question(
    make: Make, make_cooldowns: Make, clock: ManualClock
) -> None:
    """GW-8/9/19: before a call, a 429 rest comes first, then the breaker. Each kind of
    breakers against each kind of cooldowns (the Redis pair answers in one script)."""
    breakers, cooldowns = make(failures=1, half_open_after=30), make_cooldowns()
    assert await breakers.gate(KEY, cooldowns) == (0.0, True)
    await cooldowns.cool(KEY, 5)
    cooling, admitted = await breakers.gate(KEY, cooldowns)
    assert cooling == pytest.approx(5) and not admitted
    clock.advance(5)
    await breakers.record_failure(KEY)  # trips at once (failures=1)
    assert await breakers.gate(KEY, cooldowns) == (0.0, False)
    clock.advance(30)
    assert await breakers.gate(KEY, cooldowns) == (0.0, True)  # the one half-open probe
    assert await breakers.gate(KEY, cooldowns) == (0.0, False)  # ...and only one


def test_from_config_reads_the_breaker_section() -> None:
    """GW-7: failures, half-open delay and successes to close are configurable."""
    cfg = BreakerConfig(failures=5, half_open_after_seconds=7, successes_to_close=2)
    breakers = Breakers.from_config(cfg, clock=ManualClock())
    assert (breakers.failures, breakers.half_open_after, breakers.successes_to_close) == (5, 7, 2)
