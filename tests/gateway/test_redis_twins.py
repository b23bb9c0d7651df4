"""The Redis twins of the rate limiter, breakers and cooldowns (SPEC GW-19), on a real Redis.

Their semantics are the in-process classes': test_ratelimit, test_breaker and test_cooldown run
every scenario against both. Here is what only sharing can show: two instances on two
connections, as two replicas would be, enforce one limit, trip one breaker and share one
cooldown.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from nerve.errors import RateLimited
from nerve.gateway.resilience import (
    ManualClock,
    RedisBreakers,
    RedisCooldowns,
    RedisRateLimiter,
)

ROOMY: dict[str, Any] = dict(
    window_requests=1000, window_seconds=60, burst=1000, refill_per_second=1, max_concurrent=1000
)
KEY = "openai/gpt-4o-mini"


async def refused(limiter: RedisRateLimiter, client: str = "c") -> RateLimited:
    with pytest.raises(RateLimited) as caught:
        await limiter.acquire(client)
    return caught.value


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


async def test_the_redis_gate_says_when_a_target_has_no_breaker_story(
    redis_client, redis_prefix, clock
) -> None:
    """GW-19: "pristine" lets a replica skip the success write that would change nothing."""
    client = redis_client()
    breakers = RedisBreakers(client, failures=3, prefix=redis_prefix, clock=clock)
    cooldowns = RedisCooldowns(client, prefix=redis_prefix, clock=clock)
    assert await breakers.gate_verdict(KEY, cooldowns) == (0.0, True, True)
    await breakers.record_failure(KEY)
    assert await breakers.gate_verdict(KEY, cooldowns) == (0.0, True, False)
    await breakers.record_success(KEY)
    assert await breakers.gate_verdict(KEY, cooldowns) == (0.0, True, True)
