"""Admission in one Redis script (shared_admit.py): every limit is checked before any is
taken, so a call refused by the key's budget or its own rpm spends nothing of the server's
limits; and the first candidate's breaker, asked in the same script, is honoured."""

from __future__ import annotations

import time

import httpx
import redis

from tests.conftest import make_config
from tests.fakes.upstream import Reply

URL = "/v1/chat/completions"
MSG = [{"role": "user", "content": "hello"}]
KEY = "shared-admission-key"


def chat(server, **extra):
    body = {"model": "default", "messages": MSG, "max_tokens": 9, **extra}
    r = httpx.post(f"{server.url}{URL}", json=body, timeout=10,
                   headers={"authorization": f"Bearer {KEY}"})  # fmt: skip
    return r.status_code if r.status_code == 200 else r.json()["error"]["code"]


def config(upstream, redis_url, prefix, window=3, **key):
    rate = {"window_requests": window, "window_seconds": 10**6, "burst": 100,
            "refill_per_second": 100, "max_concurrent": 100}  # fmt: skip
    return make_config(
        {"primary": upstream}, limits={"rate": rate},
        prices={"primary/m1": {"input": 1000, "output": 1000}},
        server={"api_keys": [{"name": "ci", "key": KEY, **key}]},
        redis={"url": redis_url, "key_prefix": prefix}, probes={"interval_seconds": 0},
    )  # fmt: skip


def test_a_call_the_budget_refuses_spends_nothing_of_the_server_window(
    serve, upstream, redis_url, redis_prefix, clock
):
    """Budget $0.036 = two calls of $0.018; the server's window admits three calls in all."""
    server = serve(config(upstream, redis_url, redis_prefix,
                          budget={"usd": 0.036, "period": "day"}))  # fmt: skip
    assert [chat(server) for _ in range(4)] == [200, 200, "budget_exceeded", "budget_exceeded"]
    clock.advance(86_400)  # a new day: the budget is back, the window (10**6 s) is not
    assert [chat(server), chat(server)] == [200, "window"]
    assert len(upstream.requests) == 3


def test_a_call_the_keys_rpm_refuses_spends_nothing_of_the_server_window(
    serve, upstream, redis_url, redis_prefix, clock
):
    server = serve(config(upstream, redis_url, redis_prefix, rpm=1))
    assert [chat(server), chat(server), chat(server)] == [200, "rpm", "rpm"]
    clock.advance(61)
    assert [chat(server), chat(server)] == [200, "rpm"]
    clock.advance(61)
    assert chat(server) == 200, "four refusals took none of the server's window of three"
    clock.advance(61)
    assert chat(server) == "window", "three admitted calls fill it"


def test_the_first_candidates_breaker_asked_with_admission_is_honoured(
    serve, upstream, redis_url, redis_prefix
):
    server = serve(config(upstream, redis_url, redis_prefix, window=100))
    upstream.script(*[Reply(status=500)] * 3)
    assert [chat(server) for _ in range(3)] == ["all_failed"] * 3
    calls = len(upstream.requests)
    assert chat(server) == "all_failed"
    assert len(upstream.requests) == calls, "the open breaker was read in the admission script"


def test_leases_go_back_to_redis_after_each_call(serve, upstream, redis_url, redis_prefix):
    server = serve(config(upstream, redis_url, redis_prefix, max_parallel=1))
    assert chat(server) == 200
    with redis.Redis.from_url(redis_url) as client:
        windows = list(client.scan_iter(match=f"{redis_prefix}rl:*:w"))
        assert len(windows) == 2, "the server's limits and the key's own were taken in Redis"
        leases = [w[:-1] + b"c" for w in windows]
        deadline = time.monotonic() + 5  # given back just after the answer went out
        while [client.zcard(k) for k in leases] != [0, 0]:
            assert time.monotonic() < deadline, "the leases were not given back"
            time.sleep(0.01)
