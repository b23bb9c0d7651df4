"""The admin charts' time series shared through Redis (gateway/timeseries_redis.py): two
SharedStates are two replicas; each pushes its minutes on the flush tick, either reads the sum.
Needs the Redis of tests/gateway/conftest.py (skipped when unreachable, a failure in CI)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest
import redis.asyncio

from nerve.config import RedisConfig
from nerve.gateway.resilience import ManualClock
from nerve.gateway.resilience.shared import SharedState
from nerve.gateway.stats import Stats, Usage
from nerve.gateway.timeseries_redis import TTL_SECONDS, share

USAGE = Usage(prompt_tokens=10, completion_tokens=5, total_tokens=15)


@pytest.fixture
async def replica(
    redis_url: str, redis_prefix: str, clock: ManualClock
) -> AsyncIterator[Callable[..., SharedState]]:
    made: list[SharedState] = []

    def make(url: str = redis_url) -> SharedState:
        state = SharedState(RedisConfig(url=url, key_prefix=redis_prefix), clock=clock,
                            stats=Stats(clock=clock))  # fmt: skip
        share(state, state.local_stats.timeseries)
        made.append(state)
        return state

    yield make
    for state in made:
        await state.close()


def record(state: SharedState, latency: float, *, route: str = "default", ok: bool = True) -> None:
    state.local_stats.record(route=route, provider="p", model="m", ok=ok, latency_s=latency,
                             usage=USAGE, fallback=not ok)  # fmt: skip


async def test_two_replicas_minutes_are_summed(
    replica: Callable[..., SharedState], clock: ManualClock, redis_url: str, redis_prefix: str
) -> None:
    a, b = replica(), replica()
    for _ in range(9):
        record(a, 0.010)
    clock.advance(60)
    record(b, 2.0, route="code")
    record(b, 0.0, route="code", ok=False)
    await a.flush()
    await b.flush()
    assert b.local_stats.timeseries.local(0) == {}  # drained into Redis
    data = await a.local_stats.timeseries.view("1h", "route")
    other = await b.local_stats.timeseries.view("1h", "route")
    assert data == other
    total = data["total"]
    assert total["calls"][-2:] == [9, 2] and total["errors"][-2:] == [0, 1]
    assert total["fallbacks"][-1] == 1 and total["tokens"][-2:] == [135, 30]
    assert total["p50_ms"][-2] == pytest.approx(10, rel=0.1)
    assert total["p95_ms"][-1] == pytest.approx(2000, rel=0.1)
    assert data["series"]["code"]["calls"][-1] == 2 and sum(data["series"]["default"]["calls"]) == 9
    by_model = await b.local_stats.timeseries.view("24h", "model")
    assert list(by_model["series"]) == ["p/m"] and sum(by_model["total"]["calls"]) == 11

    client = redis.asyncio.Redis.from_url(redis_url, decode_responses=True)
    try:
        keys = [k async for k in client.scan_iter(match=f"{redis_prefix}ts:*")]
        assert len(keys) == 2  # one hash per minute, each expiring after 25 h
        assert 0 < await client.ttl(keys[0]) <= TTL_SECONDS
    finally:
        await client.aclose()


async def test_while_redis_is_down_reads_show_the_unflushed_minutes(
    replica: Callable[..., SharedState],
) -> None:
    down = replica("redis://127.0.0.1:1/15")  # nothing listens there
    record(down, 0.05)
    await down.flush()
    assert not down.ok
    data = await down.local_stats.timeseries.view("1h", "route")
    assert data["total"]["calls"][-1] == 1  # absorbed back, not lost
