"""Real `nerve serve` replicas on one Redis learn as one router (SPEC GW-12, GW-19).

Two processes in front of one fake upstream whose primary candidate fails: traffic through A
only, and B shows the same /evolution and plans like A without having served anything; a reset
through one is a reset for both. Breakers are out of the way (1000 failures to open), so only
the learner can stop a call to the failing candidate.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.fakes.upstream import FakeUpstream, Reply
from tests.processes import Replica

MSG = [{"role": "user", "content": "hello"}]
PASSWORD = "correct horse battery staple"


@pytest.fixture
def replicas(redis_prefix: str, spawn) -> Callable[..., list[Replica]]:
    """`spawn`, set up after `redis_prefix`, so its replicas stop before the keys are deleted."""
    return spawn


def config(upstream: FakeUpstream, redis_url: str, prefix: str) -> dict[str, Any]:
    providers = [
        {"name": n, "protocol": "openai", "base_url": upstream.openai_base_url, "api_key": "sk"}
        for n in ("primary", "secondary")
    ]
    route = {"name": "default", "model": {"provider": "primary", "model": "m1"},
             "fallbacks": [{"provider": "secondary", "model": "m2"}]}  # fmt: skip
    return {"providers": providers, "routes": [route],
            "learning": {"enabled": True, "exploration": 0, "latency_weight": 0},
            "limits": {"breaker": {"failures": 1000}},
            "redis": {"url": redis_url, "key_prefix": prefix},
            "probes": {"interval_seconds": 0}, "memory": {"enabled": False}}  # fmt: skip


def m1_calls(upstream: FakeUpstream) -> int:
    return sum(1 for r in upstream.requests if (r.body or {}).get("model") == "m1")


async def test_replicas_learn_together_and_forget_together(
    replicas, upstream, redis_url, redis_prefix, monkeypatch
):
    """GW-12/19: A's outcomes are B's statistics and preference; a reset through B is A's."""
    monkeypatch.setenv("NERVE_ADMIN_PASSWORD", PASSWORD)
    a, b = replicas(config(upstream, redis_url, redis_prefix), count=2)
    upstream.script(*[Reply(status=500)] * 10, model="m1")
    chat = {"json": {"model": "auto", "messages": MSG}}
    async with httpx.AsyncClient(timeout=30) as client:
        for _ in range(10):  # through A only
            r = await client.post(f"{a.url}/v1/chat/completions", **chat)
            assert r.status_code == 200 and r.headers["x-nerve-model"] == "m2"
        seen_a = (await client.get(f"{a.url}/evolution")).json()  # reading flushes A
        seen_b = (await client.get(f"{b.url}/evolution")).json()
        assert seen_b == seen_a, "/evolution is the same from every replica"
        route = seen_b["routes"]["default"]
        assert route["preference"] == ["secondary/m2", "primary/m1"]
        failing, healthy = route["candidates"]["primary/m1"], route["candidates"]["secondary/m2"]
        assert failing["errors"] == failing["calls"] >= 5 and failing["success_rate"] == 0.0
        assert healthy["calls"] == 10 and healthy["success_rate"] == 1.0
        assert route["decisions"] == 10 and len(seen_b["recent"]) == failing["calls"] + 10

        before = m1_calls(upstream)
        r = await client.post(f"{b.url}/v1/chat/completions", **chat)  # B's first request
        assert (r.headers["x-nerve-model"], r.headers["x-nerve-fallback"]) == ("m2", "false")
        assert m1_calls(upstream) == before, "B's plan led with the healthy candidate"

        login = await client.post(f"{b.url}/admin/api/login", json={"password": PASSWORD})
        token = {"x-nerve-admin-token": login.json()["token"]}
        r = await client.post(f"{b.url}/evolution/reset", headers=token)
        assert r.status_code == 200
        assert r.json()["previous"]["routes"]["default"]["preference"][0] == "secondary/m2"
        after = (await client.get(f"{a.url}/evolution")).json()
        assert after["routes"]["default"]["preference"] == ["primary/m1", "secondary/m2"]
        assert after["routes"]["default"]["candidates"]["primary/m1"]["calls"] == 0
        assert after["recent"] == []
        await client.post(f"{a.url}/v1/chat/completions", **chat)
        assert m1_calls(upstream) == before + 1, "A's plan leads with the primary again"
