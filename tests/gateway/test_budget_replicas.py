"""A key's budget holds across real `nerve serve` replicas sharing one Redis (issue: budgets
that hold across replicas, not N× a budget).

Two replicas, 16 concurrent clients, 40 calls of one budgeted key. Each call reserves what it
will be billed (9 prompt tokens estimated + max_tokens 9 = 18; the fake upstream reports 11 + 7
= 18) at $0.001 a token, so a $0.18 budget admits exactly 10 calls in all — not 10 per replica.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter

import httpx
import pytest

from tests.fakes.upstream import FakeUpstream
from tests.processes import Replica

MSG = [{"role": "user", "content": "hello"}]
KEY = "budget-key-across-replicas"


@pytest.fixture
def replicas(redis_prefix: str, spawn):
    """`spawn`, set up after `redis_prefix`, so its replicas stop before the keys are deleted."""
    return spawn


def config(upstream: FakeUpstream, redis_url: str, prefix: str) -> dict:
    big = 1_000_000
    return {
        "providers": [{"name": "primary", "protocol": "openai",
                       "base_url": upstream.openai_base_url, "api_key": "sk-test"}],
        "routes": [{"name": "default", "model": {"provider": "primary", "model": "m1"}}],
        "prices": {"primary/m1": {"input": 1000, "output": 1000}},
        "server": {"api_keys": [{"name": "ci", "key": KEY,
                                 "budget": {"usd": 0.18, "period": "month"}}]},
        "limits": {"rate": {"window_requests": big, "burst": big, "refill_per_second": big,
                            "max_concurrent": big}},
        "redis": {"url": redis_url, "key_prefix": prefix},
        "probes": {"interval_seconds": 0}, "memory": {"enabled": False},
    }  # fmt: skip


async def fire(replicas: list[Replica], n: int, concurrency: int) -> Counter[str]:
    queue: asyncio.Queue[str] = asyncio.Queue()
    for i in range(n):
        queue.put_nowait(replicas[i % len(replicas)].url)
    seen: Counter[str] = Counter()
    body = {"model": "default", "messages": MSG, "max_tokens": 9}
    headers = {"authorization": f"Bearer {KEY}"}

    async def worker(client: httpx.AsyncClient) -> None:
        while not queue.empty():
            url = queue.get_nowait()
            r = await client.post(f"{url}/v1/chat/completions", json=body, headers=headers)
            seen["200" if r.status_code == 200 else r.json()["error"]["code"]] += 1

    async with httpx.AsyncClient(timeout=30) as client:
        await asyncio.gather(*(worker(client) for _ in range(concurrency)))
    return seen


async def test_two_replicas_keep_one_budget(replicas, upstream, redis_url, redis_prefix):
    a, b = replicas(config(upstream, redis_url, redis_prefix), count=2)
    seen = await fire([a, b], 40, concurrency=16)
    assert seen == {"200": 10, "budget_exceeded": 30}
    assert len(upstream.requests) == 10
    async with httpx.AsyncClient(timeout=10) as client:
        r = await client.post(
            f"{b.url}/v1/chat/completions",
            json={"model": "default", "messages": MSG, "max_tokens": 9},
            headers={"authorization": f"Bearer {KEY}"},
        )
    assert r.status_code == 429
    assert "$0.18 of its $0.18 monthly budget" in r.json()["error"]["message"]
    # Every hold was settled with what was used (each replica pays what it owes within 20 ms).
    async with httpx.AsyncClient(timeout=10) as client:
        deadline = time.monotonic() + 5
        while True:
            stats = await client.get(f"{a.url}/stats", headers={"authorization": f"Bearer {KEY}"})
            (budget,) = stats.json()["budgets"]
            if budget["held_usd"] == 0 or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.02)  # polling a condition the replicas bring about, bounded
    assert budget["usd"] == pytest.approx(0.18) and budget["held_usd"] == 0
