"""Per-client rate limits: window, burst, concurrent (SPEC GW-15, GW-19), by a ManualClock.

The limit scenarios run against each implementation of `LimiterSeam` (implementations.py): the
in-process `RateLimiter` and its Redis twin, same assertions, same semantics. What only the
in-process one has (its bounded client table, `snapshot()`) is tested on it alone.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from nerve.config import RateConfig
from nerve.errors import RateLimited
from nerve.gateway.resilience import LimiterSeam, ManualClock, RateLimiter
from tests.gateway.implementations import IMPLEMENTATIONS, implementation

ROOMY: dict[str, Any] = dict(
    window_requests=1000, window_seconds=60, burst=1000, refill_per_second=1, max_concurrent=1000
)


def limiter(clock: ManualClock, **limits: Any) -> RateLimiter:
    return RateLimiter(**{**ROOMY, **limits}, clock=clock)


Make = Callable[..., LimiterSeam]


@pytest.fixture(params=IMPLEMENTATIONS)
def make(request: pytest.FixtureRequest, clock: ManualClock) -> Make:
    """make(**limits): a limiter of ROOMY limits but these, of each implementation."""
    new = implementation(request, clock, "limiter")
    return lambda **limits: new(**{**ROOMY, **limits})


async def refused(rl: LimiterSeam, client: str = "c") -> RateLimited:
    with pytest.raises(RateLimited) as caught:
        await rl.acquire(client)
    return caught.value


async def test_too_many_in_flight_is_refused_as_concurrent_with_retry_after_1(
    make: Make, clock: ManualClock
) -> None:
    """GW-15: at most max_concurrent admitted requests per client at once; HTTP 429."""
    rl = make(max_concurrent=2)
    first = await rl.acquire("c")
    await rl.acquire("c")
    err = await refused(rl)
    assert (err.reason, err.retry_after, err.status) == ("concurrent", 1.0, 429)
    assert err.code == "concurrent"
    await rl.release("c", first)
    await rl.acquire("c")


async def test_an_empty_bucket_is_refused_as_burst_until_the_next_token(
    make: Make, clock: ManualClock
) -> None:
    """GW-15: a token bucket of capacity `burst`; retry_after is the time to the next token."""
    rl = make(burst=3, refill_per_second=1)
    for _ in range(3):
        await rl.acquire("c")
    err = await refused(rl)
    assert err.reason == "burst"
    assert err.retry_after == pytest.approx(1.0)
    clock.advance(0.25)
    assert (await refused(rl)).retry_after == pytest.approx(0.75)
    clock.advance(0.75)
    await rl.acquire("c")


async def test_the_bucket_refills_over_time_up_to_its_capacity(
    make: Make, clock: ManualClock
) -> None:
    """GW-15: refill_per_second tokens come back each second, never more than `burst`."""
    rl = make(burst=5, refill_per_second=2)
    for _ in range(5):
        await rl.acquire("c")
    clock.advance(1)
    await rl.acquire("c")
    await rl.acquire("c")
    assert (await refused(rl)).retry_after == pytest.approx(0.5)
    clock.advance(1000)
    for _ in range(5):
        await rl.acquire("c")
    assert (await refused(rl)).reason == "burst"


async def test_fractional_refills_add_up_to_whole_tokens(make: Make, clock: ManualClock) -> None:
    """GW-15: ten tenths of a token are one token, float rounding notwithstanding."""
    rl = make(burst=1, refill_per_second=0.1)
    await rl.acquire("c")
    for _ in range(10):
        clock.advance(1)
    await rl.acquire("c")


async def test_a_full_window_is_refused_until_its_oldest_request_leaves(
    make: Make, clock: ManualClock
) -> None:
    """GW-15: at most window_requests in any window_seconds; the window slides."""
    rl = make(window_requests=3, window_seconds=60)
    for _ in range(3):
        await rl.acquire("c")
        clock.advance(10)
    err = await refused(rl)  # t=30: the first request, at t=0, leaves at t=60
    assert err.reason == "window"
    assert err.retry_after == pytest.approx(30)
    clock.advance(30)
    await rl.acquire("c")  # t=60: window holds t=10, 20, 60
    assert (await refused(rl)).retry_after == pytest.approx(10)
    clock.advance(10)
    await rl.acquire("c")


async def test_when_two_limits_refuse_the_one_that_clears_last_is_named(
    make: Make, clock: ManualClock
) -> None:
    """GW-15: retry_after is when the request would pass; the reason is what holds it back."""
    slow_refill = make(window_requests=1, window_seconds=60, burst=1, refill_per_second=0.01)
    await slow_refill.acquire("c")
    err = await refused(slow_refill)
    assert err.reason == "burst"
    assert err.retry_after == pytest.approx(100)

    fast_refill = make(window_requests=1, window_seconds=60, burst=1, refill_per_second=1)
    await fast_refill.acquire("c")
    err = await refused(fast_refill)
    assert err.reason == "window"
    assert err.retry_after == pytest.approx(60)


async def test_refused_requests_consume_nothing(make: Make, clock: ManualClock) -> None:
    """GW-15: a refusal takes no token, no window slot and no concurrency slot."""
    # Burst refusals take no window slot: the second request still fits the window of 2.
    rl = make(window_requests=2, window_seconds=100, burst=1, refill_per_second=1)
    await rl.acquire("c")
    for _ in range(5):
        assert (await refused(rl)).reason == "burst"
    clock.advance(1)
    await rl.acquire("c")

    # Window refusals take no token: the second token is still there when the window frees.
    rl = make(window_requests=1, window_seconds=10, burst=2, refill_per_second=1e-6)
    await rl.acquire("c")
    for _ in range(5):
        assert (await refused(rl)).reason == "window"
    clock.advance(10)
    await rl.acquire("c")

    # No refusal holds a concurrency slot.
    rl = make(burst=1, refill_per_second=1, max_concurrent=1)
    lease = await rl.acquire("c")
    assert (await refused(rl)).reason == "concurrent"
    await rl.release("c", lease)
    for _ in range(5):
        assert (await refused(rl)).reason == "burst"
    clock.advance(1)
    await rl.acquire("c")


async def test_clients_are_limited_independently(make: Make, clock: ManualClock) -> None:
    """GW-15: one client's exhausted limits do not touch another's."""
    rl = make(burst=1, refill_per_second=1e-6, max_concurrent=1)
    lease = await rl.acquire("key-a")
    assert (await refused(rl, "key-a")).reason == "concurrent"
    await rl.release("key-a", lease)
    assert (await refused(rl, "key-a")).reason == "burst"
    await rl.acquire("10.0.0.2")


async def test_memory_is_bounded_by_max_clients_forgetting_the_least_recent() -> None:
    """GW-15: a flood of new clients cannot grow memory; the least recently seen is forgotten."""
    rl = limiter(ManualClock(), burst=1, refill_per_second=1e-6, max_clients=2)
    await rl.acquire("a")
    await rl.acquire("b")
    assert (await refused(rl, "a")).reason == "burst"  # touching a makes b the least recent
    await rl.acquire("c")
    assert (await refused(rl, "a")).reason == "burst"  # a is remembered
    await rl.acquire("b")  # b was forgotten: it starts afresh (and a, least recent, goes)
    for i in range(100):
        await rl.acquire(f"flood-{i}")
    snap = rl.snapshot()
    assert snap["clients"] == 2
    assert snap["evicted"] == 102
    assert snap["in_flight"] == 2  # forgotten clients' requests are no longer counted
    await rl.release("a")  # a forgotten client has nothing to release: no error


async def test_quiet_clients_are_forgotten_before_the_table_fills() -> None:
    """GW-15: once a client's window and bucket have recovered, its state is dropped."""
    clock = ManualClock()
    rl = limiter(clock, window_seconds=60, burst=5, refill_per_second=1)
    await rl.acquire("a")
    await rl.release("a")
    clock.advance(59)
    await rl.acquire("b")
    assert rl.snapshot()["clients"] == 2
    clock.advance(61)
    await rl.acquire("c")  # a, quiet for 120 s, is forgotten; b holds a request in flight
    assert rl.snapshot()["clients"] == 2
    await rl.release("b")
    clock.advance(60)
    await rl.acquire("d")
    assert rl.snapshot()["clients"] == 3  # b is quiet now, but the sweep stops at busy c


def test_from_config_uses_the_spec_defaults() -> None:
    """GW-15: window 300 req / 60 s, burst 50 refilled 1/s, 30 concurrent by default."""
    rl = RateLimiter.from_config(RateConfig.model_validate({}), clock=ManualClock())
    assert rl.snapshot()["limits"] == {
        "window_requests": 300,
        "window_seconds": 60,
        "burst": 50,
        "refill_per_second": 1,
        "max_concurrent": 30,
    }


async def test_snapshot_is_json_ready() -> None:
    """GW-13: the limiter's state can be shown on /stats."""
    rl = limiter(ManualClock())
    await rl.acquire("a")
    snap = json.loads(json.dumps(rl.snapshot()))
    assert (snap["clients"], snap["in_flight"]) == (1, 1)
