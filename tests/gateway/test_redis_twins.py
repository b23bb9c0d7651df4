"""The Redis twins of the rate limiter, breakers and cooldowns (SPEC GW-19), on a real Redis.

The scenarios of test_ratelimit/test_breaker/test_cooldown run against both implementations (same
assertions: same semantics); then what only sharing can show: two instances on two connections,
as two replicas would be, enforce one limit, trip one breaker and share one cooldown.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

import pytest

from nerve.errors import RateLimited
from nerve.gateway.resilience import (
    Breakers,
    Cooldowns,
    ManualClock,
    RateLimiter,
    RedisBreakers,
    RedisCooldowns,
    RedisRateLimiter,
)

ROOMY: dict[str, Any] = dict(
    window_requests=1000, window_seconds=60, burst=1000, refill_per_second=1, max_concurrent=1000
)
KEY = "openai/gpt-4o-mini"


@pytest.fixture(params=["local", "redis"])
def make(request: pytest.FixtureRequest, clock: ManualClock) -> Callable[..., Any]:
    """make(kind_class_name, **options): the in-process class or its Redis twin, same options."""
    if request.param == "local":
        local = {"limiter": RateLimiter, "breakers": Breakers, "cooldowns": Cooldowns}
        return lambda what, **kw: local[what](**kw, clock=clock)
    client = request.getfixturevalue("redis_client")()
    prefix = request.getfixturevalue("redis_prefix")
    twins = {"limiter": RedisRateLimiter, "breakers": RedisBreakers, "cooldowns": RedisCooldowns}
    return lambda what, **kw: twins[what](client, **kw, prefix=prefix, clock=clock)


async def state(breakers: Any, key: str = KEY) -> str:
    value = breakers.state(key)
    return str(await value) if inspect.isawaitable(value) else str(value)


async def refused(limiter: Any, client: str = "c") -> RateLimited:
    with pytest.raises(RateLimited) as caught:
        await limiter.acquire(client)
    return caught.value


async def test_rate_limits_refuse_by_window_burst_and_concurrency_alike(make, clock) -> None:
    """GW-15/19: window, burst and concurrent refusals, their retry_after, and release."""
    rl = make("limiter", **{**ROOMY, "max_concurrent": 2})
    first = await rl.acquire("c")
    await rl.acquire("c")
    err = await refused(rl)
    assert (err.reason, err.retry_after) == ("concurrent", 1.0)
    await rl.release("c", first)
    await rl.acquire("c")

    rl = make("limiter", **{**ROOMY, "burst": 3, "refill_per_second": 1})
    for _ in range(3):
        await rl.acquire("b")
    err = await refused(rl, "b")
    assert err.reason == "burst" and err.retry_after == pytest.approx(1.0)
    clock.advance(0.25)
    assert (await refused(rl, "b")).retry_after == pytest.approx(0.75)
    clock.advance(0.75)
    await rl.acquire("b")

    rl = make("limiter", **{**ROOMY, "window_requests": 3, "window_seconds": 60})
    for _ in range(3):
        await rl.acquire("w")
        clock.advance(10)
    err = await refused(rl, "w")
    assert err.reason == "window" and err.retry_after == pytest.approx(30)
    clock.advance(30)
    await rl.acquire("w")
    assert (await refused(rl, "w")).retry_after == pytest.approx(10)


async def test_refusals_consume_nothing_and_the_last_to_clear_is_named(make, clock) -> None:
    """GW-15/19: a refused request takes no token, window slot or concurrency slot."""
    rl = make("limiter", **{**ROOMY, "window_requests": 2, "window_seconds": 100, "burst": 1})
    await rl.acquire("c")
    for _ in range(5):
        assert (await refused(rl)).reason == "burst"
    clock.advance(1)
    await rl.acquire("c")

    rl = make("limiter", **{**ROOMY, "window_requests": 1, "window_seconds": 10, "burst": 2,
                            "refill_per_second": 1e-6})  # fmt: skip
    await rl.acquire("d")
    for _ in range(5):
        assert (await refused(rl, "d")).reason == "window"
    clock.advance(10)
    await rl.acquire("d")

    rl = make("limiter", **{**ROOMY, "window_requests": 1, "burst": 1, "refill_per_second": 0.01})
    await rl.acquire("e")
    err = await refused(rl, "e")
    assert (err.reason, err.retry_after) == ("burst", pytest.approx(100))
    clock.advance(1000)
    await rl.acquire("f")
    await rl.acquire("g")  # clients are independent


async def test_fractional_refills_add_up_to_whole_tokens(make, clock) -> None:
    """GW-15/19: ten tenths of a token are one token, float rounding notwithstanding."""
    rl = make("limiter", **{**ROOMY, "burst": 1, "refill_per_second": 0.1})
    await rl.acquire("c")
    for _ in range(10):
        clock.advance(1)
    await rl.acquire("c")


async def test_the_breaker_runs_its_cycle_with_one_probe_at_a_time(make, clock) -> None:
    """GW-7/19: closed → open → half-open (one probe) → open again → closed."""
    breakers = make("breakers", failures=3, half_open_after=60)
    for _ in range(2):
        await breakers.record_failure(KEY)
    assert await state(breakers) == "closed" and await breakers.allow(KEY)
    await breakers.record_failure(KEY)
    assert await state(breakers) == "open" and not await breakers.allow(KEY)
    clock.advance(60)
    assert await state(breakers) == "half_open"
    assert sorted(await asyncio.gather(breakers.allow(KEY), breakers.allow(KEY))) == [False, True]
    await breakers.record_failure(KEY)
    assert await state(breakers) == "open"
    clock.advance(60)
    assert await breakers.allow(KEY)
    await breakers.record_success(KEY)
    assert await state(breakers) == "closed" and await breakers.allow(KEY)
    assert await breakers.view() == {}


async def test_breaker_probes_successes_release_timeout_and_late_results(make, clock) -> None:
    """GW-7/19: successes_to_close, release, a lost probe, late answers while open."""
    breakers = make("breakers", failures=1, half_open_after=10, successes_to_close=2,
                    probe_timeout=5)  # fmt: skip
    await breakers.record_failure(KEY)
    clock.advance(5)
    await breakers.record_success(KEY)  # late, while open: does not close
    await breakers.record_failure(KEY)  # late, while open: does not extend
    clock.advance(5)
    assert await breakers.allow(KEY) and not await breakers.allow(KEY)
    await breakers.release(KEY)
    assert await breakers.allow(KEY)
    clock.advance(5)  # that probe never reported: presumed lost
    assert await breakers.allow(KEY)
    await breakers.record_success(KEY)
    assert await state(breakers) == "half_open"
    view = (await breakers.view())[KEY]
    assert view["probe_successes"] == 1 and view["probe_in_flight"] is False
    assert await breakers.allow(KEY)
    await breakers.record_success(KEY)
    assert await state(breakers) == "closed"


async def test_a_probe_success_keeps_a_closed_breakers_call_failures(make, clock) -> None:
    """A model list that answers says nothing of chat: it closes a half-open breaker, but the
    consecutive call failures of a closed one stand, and the next one opens it."""
    breakers = make("breakers", failures=3, half_open_after=10)
    await breakers.record_failure(KEY)
    await breakers.record_failure(KEY)
    await breakers.record_success(KEY, probe=True)
    assert (await breakers.view())[KEY]["consecutive_failures"] == 2
    await breakers.record_failure(KEY)
    assert await state(breakers) == "open"
    clock.advance(10)
    assert await breakers.allow(KEY)
    await breakers.record_success(KEY, probe=True)
    assert await state(breakers) == "closed" and await breakers.view() == {}


async def test_breaker_view_lists_keys_with_a_story(make, clock) -> None:
    """GW-13/19: the view has the snapshot's shape; pristine keys are absent."""
    breakers = make("breakers", failures=2, half_open_after=60)
    await breakers.record_failure("a/x")
    await breakers.record_failure("b/y")
    await breakers.record_failure("b/y")
    clock.advance(15)
    view = await breakers.view()
    assert view["a/x"]["state"] == "closed" and view["a/x"]["consecutive_failures"] == 1
    assert view["b/y"]["state"] == "open"
    assert (view["b/y"]["opened_at_ago_s"], view["b/y"]["half_open_in_s"]) == (15, 45)
    await breakers.record_success("a/x")
    assert set(await breakers.view()) == {"b/y"}


async def test_cooldowns_keep_the_longer_rest_and_expire(make, clock) -> None:
    """GW-8/19: default and clamped durations; a shorter 429 does not cut a running rest."""
    cooldowns = make("cooldowns", default_seconds=30, max_seconds=600)
    assert await cooldowns.cool("a/x", None) == 30
    assert await cooldowns.cool("b/y", 86_400) == 600
    assert await cooldowns.cool("c/z", -3) == 0
    assert await cooldowns.remaining("c/z") == 0
    clock.advance(10)
    assert await cooldowns.cool("a/x", 5) == 20
    assert await cooldowns.cool("a/x", 80) == 80
    assert await cooldowns.view() == {"a/x": 80, "b/y": 590}
    clock.advance(80)
    assert await cooldowns.remaining("a/x") == 0
    assert await cooldowns.view() == {"b/y": 510}


# --- what only sharing shows: two instances on two connections, as two replicas --------------


def twins(redis_client, prefix: str, clock: ManualClock, what: type, **kw: Any) -> list[Any]:
    return [what(redis_client(), **kw, prefix=prefix, clock=clock) for _ in range(2)]


async def test_two_limiters_under_concurrent_load_admit_exactly_the_limit(
    redis_client, redis_prefix, clock
) -> None:
    """GW-19: 200 concurrent acquires through two connections: the window admits 50, not 100."""
    a, b = twins(redis_client, redis_prefix, clock, RedisRateLimiter,
                 **{**ROOMY, "window_requests": 50})  # fmt: skip

    async def attempt(limiter: RedisRateLimiter) -> bool:
        try:
            await limiter.acquire("one-client")
        except RateLimited:
            return False
        return True

    admitted = await asyncio.gather(*(attempt(a if i % 2 else b) for i in range(200)))
    assert sum(admitted) == 50

    a, b = twins(redis_client, redis_prefix + "c:", clock, RedisRateLimiter,
                 **{**ROOMY, "max_concurrent": 5})  # fmt: skip
    admitted = await asyncio.gather(*(attempt(a if i % 2 else b) for i in range(40)))
    assert sum(admitted) == 5
    assert await a.in_flight("one-client") == 5


async def test_leases_of_a_replica_that_died_go_stale(redis_client, redis_prefix, clock) -> None:
    """GW-19: in-flight slots held by a dead replica are freed after the lease time."""
    dead, alive = twins(redis_client, redis_prefix, clock, RedisRateLimiter,
                        **{**ROOMY, "max_concurrent": 2}, lease_seconds=600)  # fmt: skip
    await dead.acquire("c")
    await dead.acquire("c")  # ... and the replica is killed before releasing either
    assert (await refused(alive)).reason == "concurrent"
    clock.advance(599)
    assert (await refused(alive)).reason == "concurrent"
    clock.advance(1)
    lease = await alive.acquire("c")
    await alive.release("c", lease)
    await alive.release("c", lease)  # twice: harmless
    assert await alive.in_flight("c") == 0


async def test_a_breaker_tripped_through_one_replica_is_open_on_the_other(
    redis_client, redis_prefix, clock
) -> None:
    """GW-19: one breaker for all replicas; in half-open, one probe among them all."""
    a, b = twins(redis_client, redis_prefix, clock, RedisBreakers, failures=2, half_open_after=30)
    await a.record_failure(KEY)
    await b.record_failure(KEY)  # consecutive across replicas
    assert await b.state(KEY) == "open" and not await b.allow(KEY)
    clock.advance(30)
    probes = await asyncio.gather(*(r.allow(KEY) for r in (a, b, a, b)))
    assert sorted(probes) == [False, False, False, True]
    await b.record_success(KEY)
    assert await a.state(KEY) == "closed"


async def test_a_cooldown_set_by_one_replica_rests_the_target_on_the_other(
    redis_client, redis_prefix, clock
) -> None:
    """GW-19: a 429 seen by one replica rests the model for all; the longer rest wins."""
    a, b = twins(redis_client, redis_prefix, clock, RedisCooldowns)
    results = await asyncio.gather(a.cool(KEY, 20), b.cool(KEY, 50), a.cool(KEY, 10))
    assert max(results) == 50
    assert await b.remaining(KEY) == 50 and await a.remaining(KEY) == 50
    clock.advance(50)
    assert await a.remaining(KEY) == 0


async def test_the_gate_answers_cooldown_and_breaker_in_one_question(make, clock) -> None:
    """GW-8/9/19: before a call, a 429 rest comes first, then the breaker; one round trip."""
    breakers = make("breakers", failures=1, half_open_after=30)
    cooldowns = make("cooldowns")
    gate = lambda: breakers.gate(KEY, cooldowns)  # noqa: E731

    assert (await gate())[:2] == (0.0, True)
    await cooldowns.cool(KEY, 5)
    cooling, admitted = (await gate())[:2]
    assert cooling == pytest.approx(5) and not admitted
    clock.advance(5)
    await breakers.record_failure(KEY)  # trips at once (failures=1)
    assert (await gate())[:2] == (0.0, False)
    clock.advance(30)
    assert (await gate())[:2] == (0.0, True)  # the one half-open probe
    assert (await gate())[:2] == (0.0, False)  # ...and only one


async def test_the_redis_gate_says_when_a_target_has_no_breaker_story(
    redis_client, redis_prefix, clock
) -> None:
    """GW-19: "pristine" lets a replica skip the success write that would change nothing."""
    client = redis_client()
    breakers = RedisBreakers(client, failures=3, prefix=redis_prefix, clock=clock)
    cooldowns = RedisCooldowns(client, prefix=redis_prefix, clock=clock)
    assert await breakers.gate(KEY, cooldowns) == (0.0, True, True)
    await breakers.record_failure(KEY)
    assert await breakers.gate(KEY, cooldowns) == (0.0, True, False)
    await breakers.record_success(KEY)
    assert await breakers.gate(KEY, cooldowns) == (0.0, True, True)
