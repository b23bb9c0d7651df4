"""Real `nerve serve` processes sharing one Redis act as one gateway (SPEC GW-19).

Two replicas (and one server with --workers 2) in front of one fake upstream: together they admit
exactly one rate limit, a breaker tripped through one is open on the other, and /stats on either
shows the sum. Servers are ready when /health answers (polled under a deadline); every process is
stopped, with its workers, at teardown.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.fakes.upstream import FakeUpstream, Reply
from tests.processes import Replica

MSG = [{"role": "user", "content": "hello"}]


@pytest.fixture
def replicas(redis_prefix: str, spawn) -> Callable[..., list[Replica]]:
    """`spawn`, set up after `redis_prefix`, so its replicas stop before the keys are deleted."""
    return spawn


def config(upstream: FakeUpstream, redis_url: str, prefix: str, window: int) -> dict[str, Any]:
    big = 1_000_000
    providers = [
        {"name": n, "protocol": "openai", "base_url": upstream.openai_base_url, "api_key": "sk"}
        for n in ("primary", "secondary")
    ]
    route = {"name": "default", "model": {"provider": "primary", "model": "m1"},
             "fallbacks": [{"provider": "secondary", "model": "m2"}]}  # fmt: skip
    rate = {"window_requests": window, "window_seconds": 600, "burst": big,
            "refill_per_second": big, "max_concurrent": big}  # fmt: skip
    return {"providers": providers, "routes": [route], "limits": {"rate": rate},
            "redis": {"url": redis_url, "key_prefix": prefix},
            "server": {"api_keys": ["one-client", "another"]},
            "probes": {"interval_seconds": 0}, "memory": {"enabled": False}}  # fmt: skip


async def fire(urls: list[str], n: int, concurrency: int, key: str) -> Counter[int]:
    """n chat requests from ONE client (one API key), spread over `urls`, `concurrency` at once."""
    queue: asyncio.Queue[str] = asyncio.Queue()
    for i in range(n):
        queue.put_nowait(urls[i % len(urls)])
    statuses: Counter[int] = Counter()
    headers = {"authorization": f"Bearer {key}"}
    body = {"model": "auto", "messages": MSG}

    async def worker(client: httpx.AsyncClient) -> None:
        while not queue.empty():
            url = queue.get_nowait()
            r = await client.post(f"{url}/v1/chat/completions", json=body, headers=headers)
            statuses[r.status_code] += 1

    async with httpx.AsyncClient(timeout=30) as client:
        await asyncio.gather(*(worker(client) for _ in range(concurrency)))
    return statuses


def m1_calls(upstream: FakeUpstream) -> int:
    return sum(1 for r in upstream.requests if (r.body or {}).get("model") == "m1")


async def test_two_replicas_act_as_one_gateway(replicas, upstream, redis_url, redis_prefix):
    """GW-19: one limit (100 of 160 admitted, not 200), one breaker, one sum of stats."""
    a, b = replicas(config(upstream, redis_url, redis_prefix, window=100), count=2)
    assert await fire([a.url, b.url], 160, concurrency=16, key="one-client") == {200: 100, 429: 60}

    upstream.script(*[Reply(status=500)] * 3, model="m1")
    async with httpx.AsyncClient(timeout=30) as client:
        post = {"json": {"model": "auto", "messages": MSG},
                "headers": {"authorization": "Bearer another"}}  # fmt: skip
        for _ in range(3):  # through A: m1 fails three times, m2 answers
            r = await client.post(f"{a.url}/v1/chat/completions", **post)
            assert r.status_code == 200 and r.headers["x-nerve-fallback"] == "true"
        before = m1_calls(upstream)
        r = await client.post(f"{b.url}/v1/chat/completions", **post)  # through B
        assert r.status_code == 200 and r.headers["x-nerve-model"] == "m2"
        assert m1_calls(upstream) == before, "B must skip m1: its breaker was tripped through A"
        assert (await client.get(f"{b.url}/health")).json()["breakers_not_closed"] == ["primary/m1"]

        key = post["headers"]
        await client.get(f"{a.url}/stats", headers=key)  # reading flushes A's counts
        stats = (await client.get(f"{b.url}/stats", headers=key)).json()
        health = [(await client.get(f"{r.url}/health")).json() for r in (a, b)]
    assert (stats["calls"], stats["errors"], stats["fallbacks"]) == (107, 3, 4)
    assert stats["rejections"] == {"window": 60}
    assert stats["breakers"]["primary/m1"]["state"] == "open"
    assert max(h["shared_state"]["replicas"] for h in health) == 2
    assert all(h["shared_state"]["ok"] for h in health)


async def test_workers_of_one_server_share_one_limit(replicas, upstream, redis_url, redis_prefix):
    """GW-19: `nerve serve --workers 2` with redis.url: the workers enforce one limit."""
    (server,) = replicas(config(upstream, redis_url, redis_prefix, window=20), workers=2)
    deadline = time.monotonic() + 10

    async def replicas_seen() -> int:  # a new connection each time: any worker may answer
        async with httpx.AsyncClient(timeout=10) as client:
            health = (await client.get(f"{server.url}/health")).json()
        return int(health["shared_state"]["replicas"])

    while await replicas_seen() < 2:
        assert time.monotonic() < deadline, "the second worker never registered"
        await asyncio.sleep(0.05)  # polling a condition (the next heartbeat), bounded
    assert await fire([server.url], 40, concurrency=8, key="one-client") == {200: 20, 429: 20}
