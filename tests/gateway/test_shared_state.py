"""Shared state through Redis (SPEC GW-19): the failure policy, recovery, heartbeat, stats.

Outages are real: the gateway talks to Redis through a TCP forwarder the test switches off (every
connection dropped, the port closed) and on again. Time is a ManualClock, so the retry pacing is
checked without sleeping.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import urlsplit

import pytest

from nerve.config import RateConfig, RedisConfig
from nerve.errors import RateLimited, SharedStateUnavailable
from nerve.gateway.resilience import ManualClock
from nerve.gateway.resilience.shared import SharedState, redacted
from nerve.gateway.resilience.shared_limiter import SharedLimiter
from nerve.gateway.stats import Stats, Usage

ROOMY = {"window_requests": 1000, "burst": 1000, "refill_per_second": 1000, "max_concurrent": 1000}


class Switch:
    """A TCP forwarder to Redis: `off()` is an outage (connections dropped, port closed)."""

    def __init__(self, target: str) -> None:
        parts = urlsplit(target)
        self.host, self.target_port = parts.hostname or "127.0.0.1", parts.port or 6379
        self.db = parts.path
        self.port = 0
        self.server: asyncio.Server | None = None
        self.pipes: set[asyncio.Task[None]] = set()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}{self.db}"

    async def on(self) -> None:
        self.server = await asyncio.start_server(self._connect, "127.0.0.1", self.port)
        self.port = self.server.sockets[0].getsockname()[1]

    async def off(self) -> None:
        assert self.server is not None
        self.server.close()
        await self.server.wait_closed()
        for task in self.pipes:
            task.cancel()
        await asyncio.gather(*self.pipes, return_exceptions=True)

    async def _connect(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(self.host, self.target_port)

        async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            finally:
                dst.close()

        for src, dst in ((reader, up_writer), (up_reader, writer)):
            task = asyncio.ensure_future(pump(src, dst))
            self.pipes.add(task)
            task.add_done_callback(self.pipes.discard)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
async def switch(redis_url: str) -> AsyncIterator[Switch]:
    forwarder = Switch(redis_url)
    await forwarder.on()
    yield forwarder
    with contextlib.suppress(AssertionError):
        await forwarder.off()


@pytest.fixture
async def shared_state(
    redis_url: str, redis_prefix: str, clock: ManualClock
) -> AsyncIterator[Callable[..., SharedState]]:
    made: list[SharedState] = []

    def make(url: str = redis_url, **options: Any) -> SharedState:
        cfg = RedisConfig(url=url, key_prefix=redis_prefix, **options)
        state = SharedState(cfg, clock=clock, stats=Stats(clock=clock))
        made.append(state)
        return state

    yield make
    for state in made:
        await state.close()


def limiter(shared: SharedState, clock: ManualClock, **limits: Any) -> SharedLimiter:
    return SharedLimiter(shared, RateConfig(**{**ROOMY, **limits}), clock=clock)


async def admitted(rl: SharedLimiter, n: int, client: str = "c") -> int:
    count = 0
    for _ in range(n):
        with contextlib.suppress(RateLimited):
            await rl.acquire(client)
            count += 1
    return count


async def test_local_policy_divides_the_limits_by_the_replicas_last_seen(
    switch, shared_state, clock, caplog
) -> None:
    """GW-19: Redis down → in-process limits / replicas, logged once, degraded on /health."""
    other = shared_state()
    mine = shared_state(switch.url)
    await mine.beat()
    await other.beat()
    await mine.beat()
    assert mine.replicas == 2 and mine.health()["ok"]
    rl = limiter(mine, clock, window_requests=10)
    assert await admitted(rl, 3, client="before") == 3  # through Redis

    await switch.off()
    with caplog.at_level(logging.WARNING, logger="nerve.gateway"):
        assert await admitted(rl, 10) == 5  # 10 / 2 replicas: together about one limit
    health = mine.health()
    assert (health["ok"], health["backend"], health["policy"]) == (False, "redis", "local")
    assert health["degraded_since"] is not None and "ConnectionError" in health["last_error"]
    down = [r for r in caplog.records if "SHARED STATE DOWN" in r.message]
    assert len(down) == 1 and "divided by 2" in down[0].message


async def test_while_degraded_redis_is_tried_once_per_retry_seconds_then_recovers(
    switch, shared_state, clock, caplog, monkeypatch
) -> None:
    """GW-19: no hammering while down; the first call after retry_seconds probes; recovery is
    logged once and the leases released during the outage are handed back to Redis."""
    shared = shared_state(switch.url, retry_seconds=1)
    rl = limiter(shared, clock, max_concurrent=1)
    held = await rl.acquire("c")
    await switch.off()
    tries = 0
    acquire = rl.redis.acquire

    async def counted(client: str) -> str:
        nonlocal tries
        tries += 1
        return await acquire(client)

    monkeypatch.setattr(rl.redis, "acquire", counted)
    await rl.release("c", held)  # finds Redis down: the release is owed
    assert not shared.ok
    for _ in range(20):
        lease = await rl.acquire("x")
        await rl.release("x", lease)
    assert tries == 0
    clock.advance(0.5)
    await rl.acquire("y1")
    assert tries == 0
    clock.advance(0.5)
    await rl.acquire("y2")
    await rl.acquire("y3")
    assert tries == 1 and not shared.ok  # one probe, still down

    await switch.on()
    clock.advance(1)
    with caplog.at_level(logging.WARNING, logger="nerve.gateway"):
        lease = await rl.acquire("z")
        await rl.release("z", lease)
    assert shared.ok and shared.health()["degraded_since"] is None
    assert tries == 2 and lease  # a Redis lease, not the local ""
    assert [r.message for r in caplog.records if "SHARED STATE BACK" in r.message]
    assert await rl.redis.in_flight("c") == 1  # the release owed since the outage...
    await shared.beat()
    assert await rl.redis.in_flight("c") == 0  # ...is paid after the next heartbeat


async def test_closed_policy_refuses_with_a_503_naming_shared_state(shared_state, clock) -> None:
    """GW-19: redis.on_error closed: no request is admitted without the shared limits."""
    shared = shared_state(f"redis://:hunter2@127.0.0.1:{closed_port()}/15", on_error="closed")
    rl = limiter(shared, clock)
    with pytest.raises(SharedStateUnavailable) as caught:
        await rl.acquire("c")
    error = caught.value
    assert error.status == 503 and error.to_dict()["error"]["code"] == "shared_state_unavailable"
    assert error.headers() == {"retry-after": "1"}
    assert "hunter2" not in error.message and "hunter2" not in str(shared.health())


def test_urls_are_shown_without_their_password() -> None:
    assert redacted("redis://:pw@cache:6380/2") == "redis://cache:6380/2"
    assert redacted("rediss://user:pw@cache/0") == "rediss://user@cache/0"
    assert redacted("redis://cache:6379/0") == "redis://cache:6379/0"


async def test_replicas_are_counted_by_heartbeat_and_leave_on_close(shared_state) -> None:
    """GW-19: each process registers itself with a TTL; a clean shutdown unregisters it."""
    a, b = shared_state(), shared_state()
    await a.beat()
    await b.beat()
    assert b.replicas == 2
    keys = await a.redis.keys(f"{a.prefix}replica:*")
    assert sorted(keys) == sorted(f"{a.prefix}replica:{s.id}" for s in (a, b))
    assert 0 < await a.redis.pttl(keys[0]) <= 10_000
    await b.close()
    await a.beat()
    assert a.replicas == 1


USAGE = Usage(prompt_tokens=100, completion_tokens=50, total_tokens=150)


def record(stats: Stats, route: str = "default", ok: bool = True, latency: float = 0.1) -> None:
    stats.record(route=route, provider="p", model="m", ok=ok, latency_s=latency, usage=USAGE,
                 fallback=False, error=None if ok else "UpstreamStatus")  # fmt: skip


async def test_stats_of_every_replica_are_summed_and_reset_together(shared_state, clock) -> None:
    """GW-19: /stats on any replica shows the sum of all; a reset clears it for all."""
    a, b = shared_state(), shared_state()
    for _ in range(3):
        record(a.local_stats, latency=0.1)
    record(b.local_stats, latency=0.3)
    record(b.local_stats, route="code", ok=False)
    b.local_stats.record_rejection("window")
    await b.flush()
    snap = (await a.stats_view()).snapshot()
    assert (snap["calls"], snap["errors"]) == (5, 1)
    assert snap["tokens"]["total"] == 750
    assert snap["by_route"]["default"]["calls"] == 4
    assert snap["by_route"]["code"]["last_error"] == "UpstreamStatus"
    assert snap["latency_ms"] == {"p50": 100.0, "p95": 300.0, "p99": 300.0}
    assert snap["rejections"] == {"window": 1}
    assert "nerve_requests_total" in (await b.stats_view()).prometheus()
    assert (await b.stats_view()).cost_performance()["routes"]["default"]["calls"] == 4

    previous = await b.stats_reset()
    assert previous["calls"] == 5
    assert (await a.stats_view()).snapshot()["calls"] == 0


async def test_a_failed_flush_keeps_its_counts_for_the_next(switch, shared_state, clock) -> None:
    """GW-19: counts made while Redis is down are pushed once it is back, exactly once."""
    shared = shared_state(switch.url)
    record(shared.local_stats)
    await shared.flush()
    await switch.off()
    record(shared.local_stats)
    await shared.flush()
    assert not shared.ok
    assert (await shared.stats_view()).snapshot()["calls"] == 1  # only the unflushed, meanwhile
    await switch.on()
    clock.advance(1)
    assert (await shared.stats_view()).snapshot()["calls"] == 2
    assert shared.ok


async def test_series_past_the_cap_are_counted_under_other(shared_state) -> None:
    """GW-13/19: client-chosen names cannot grow the shared tables without bound."""
    shared = shared_state()
    shared.stats.max_series = 2
    for route in ("r1", "r2", "r3", "r4"):
        record(shared.local_stats, route=route)
    await shared.flush()
    by_route = (await shared.stats_view()).snapshot()["by_route"]
    assert {k: v["calls"] for k, v in by_route.items()} == {"r1": 1, "r2": 1, "(other)": 2}
