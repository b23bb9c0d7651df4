"""The response cache across processes (SPEC OB-2, ST): two real `nerve serve` processes on one
store — a SQLite file, or Redis — answer alike: what process A fetched is a hit in process B,
with no upstream call, and the savings show in B's `/stats`."""

from __future__ import annotations

import httpx
import pytest

from tests.fakes.upstream import FakeUpstream, Reply

BODY = {"model": "default", "messages": [{"role": "user", "content": "hi"}], "temperature": 0}


@pytest.fixture
def replicas(redis_prefix: str, spawn):
    """`spawn`, set up after `redis_prefix`, so its replicas stop before the keys are deleted."""
    return spawn


def config(upstream: FakeUpstream, **extra) -> dict:
    return {
        "providers": [{"name": "primary", "protocol": "openai",
                       "base_url": upstream.openai_base_url, "api_key": "sk-test"}],
        "routes": [{"name": "default", "model": {"provider": "primary", "model": "m1"},
                    "cache": {"ttl_seconds": 600}}],
        "probes": {"interval_seconds": 0}, "memory": {"enabled": False}, **extra,
    }  # fmt: skip


def one_answer_for_both(a_url: str, b_url: str, upstream: FakeUpstream) -> None:
    upstream.script(Reply(text="from A"))
    with httpx.Client(timeout=10) as client:
        first = client.post(f"{a_url}/v1/chat/completions", json=BODY)
        streamed = client.post(f"{a_url}/v1/chat/completions", json={**BODY, "stream": True})
        hit = client.post(f"{b_url}/v1/chat/completions", json=BODY)
        hit_stream = client.post(f"{b_url}/v1/chat/completions", json={**BODY, "stream": True})
        cache = client.get(f"{b_url}/stats").json()["cache"]
    assert first.headers["x-nerve-cache"] == "miss" and hit.headers["x-nerve-cache"] == "hit"
    assert hit.content == first.content and hit.json()["choices"][0]["message"]["content"] == (
        "from A"
    )
    assert hit_stream.headers["x-nerve-cache"] == "hit" and hit_stream.text == streamed.text
    assert len(upstream.requests) == 2
    assert cache["hits"] >= 2 and cache["tokens_saved"] >= 36


def test_a_process_answers_from_what_another_process_kept_in_sqlite(spawn, upstream, tmp_path):
    a, b = spawn(config(upstream, storage={"url": f"sqlite:///{tmp_path / 'shared.db'}"}), 2)
    one_answer_for_both(a.url, b.url, upstream)


def test_a_process_answers_from_what_another_process_kept_in_redis(
    replicas, upstream, redis_url, redis_prefix
):
    a, b = replicas(config(upstream, redis={"url": redis_url, "key_prefix": redis_prefix}), 2)
    one_answer_for_both(a.url, b.url, upstream)
