"""Real `nerve serve` processes sharing one Redis act as one gateway (SPEC GW-19).

Two replicas (and one server with --workers 2) in front of one fake upstream: together they admit
exactly one rate limit, a breaker tripped through one is open on the other, and /stats on either
shows the sum. Servers are ready when /health answers (polled under a deadline); every process is
stopped, with its workers, at teardown.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.fakes.upstream import FakeUpstream, Reply

MSG = [{"role": "user", "content": "hello"}]


class Replica:
    """One `nerve serve` process group; `url` once it printed where it listens."""

    def __init__(self, config: Path, cwd: Path, workers: int) -> None:
        cwd.mkdir(exist_ok=True)
        cmd = [sys.executable, "-m", "nerve", "serve", "--config", str(config), "--port", "0"]
        env = {k: v for k, v in os.environ.items() if k != "NERVE_CONFIG"}
        self.proc = subprocess.Popen(
            [*cmd, "--workers", str(workers), "--log-level", "info"],
            cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True, start_new_session=True,
        )  # fmt: skip
        self.log: list[str] = []
        self.url = ""
        self.listening = threading.Event()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line)
            if "Uvicorn running on " in line:
                self.url = line.split("Uvicorn running on ", 1)[1].split()[0]
                self.listening.set()

    def wait_ready(self, timeout: float = 30) -> None:
        """Until /health answers 200 (the app has started), or fail with the log."""
        deadline = time.monotonic() + timeout
        assert self.listening.wait(timeout), "never listened:\n" + "".join(self.log[-30:])
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, "exited:\n" + "".join(self.log[-30:])
            try:
                if httpx.get(f"{self.url}/health", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.05)  # polling a readiness condition, bounded by the deadline
        raise AssertionError("no /health in time:\n" + "".join(self.log[-30:]))

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.reader.join(timeout=5)
        if self.proc.stderr is not None:
            self.proc.stderr.close()


@pytest.fixture
def replicas(tmp_path: Path, redis_prefix: str) -> Iterator[Callable[..., list[Replica]]]:
    """start(config, count, workers); stopped before `redis_prefix` deletes their keys."""
    started: list[Replica] = []

    def start(config: dict[str, Any], count: int = 1, workers: int = 1) -> list[Replica]:
        path = tmp_path / "nerve.yaml"
        path.write_text(yaml.safe_dump(config))
        new = [Replica(path, tmp_path / f"r{len(started) + i}", workers) for i in range(count)]
        started.extend(new)
        for replica in new:
            replica.wait_ready()
        return new

    yield start
    for replica in started:
        replica.stop()


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

        await client.get(f"{a.url}/stats")  # reading flushes A's counts
        stats = (await client.get(f"{b.url}/stats")).json()
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
