"""The response cache's promises beyond a hit (SPEC OB-2): a hit is never billed to a key's budget
but counts against its request rate, `/stats` shows what hits saved, an entry lives its TTL, a
fallback's answer is not kept, a bad entry is never served (and is replaced), and a cache that
cannot be reached (Redis down, the SQLite file locked) never fails a call."""

from __future__ import annotations

import logging
import socket
import sqlite3
from contextlib import closing
from pathlib import Path

import httpx
import pytest

from nerve.gateway.cache_entry import MAGIC
from tests.conftest import make_config
from tests.fakes.upstream import Reply

URL = "/v1/chat/completions"
KEY = "cache-key-0001"
ROUTE = {"name": "default", "model": {"provider": "primary", "model": "m1"},
         "fallbacks": [{"provider": "secondary", "model": "m2"}],
         "cache": {"ttl_seconds": 3600}}  # fmt: skip
BODY = {"model": "default", "messages": [{"role": "user", "content": "hello"}], "temperature": 0}


def config(upstream, upstream2, *, keys=None, **extra):
    keys = keys or [{"name": "ci", "key": KEY}]
    return make_config(
        {"primary": upstream, "secondary": upstream2}, [ROUTE], server={"api_keys": keys},
        probes={"interval_seconds": 0}, memory={"enabled": False}, **extra,
    )  # fmt: skip


def post(server, body: dict = BODY, **headers: str) -> httpx.Response:
    headers = {"authorization": f"Bearer {KEY}", **headers}
    return httpx.post(f"{server.url}{URL}", json=body, headers=headers, timeout=10)


def stats(server) -> dict:
    return httpx.get(f"{server.url}/stats", headers={"authorization": f"Bearer {KEY}"}).json()


def test_a_hit_is_never_billed_and_stats_show_what_it_saved(serve, upstream, upstream2):
    keys = [{"name": "ci", "key": KEY, "budget": {"usd": 1, "period": "month"}}]
    price = {"input": 1000, "output": 1000}  # $0.001 a token
    prices = {"primary/m1": price, "secondary/m2": price}
    server = serve(config(upstream, upstream2, keys=keys, prices=prices))
    body = {**BODY, "max_tokens": 9}  # what admission holds stays within the budget
    assert post(server, body).headers["x-nerve-cache"] == "miss"
    (spent,) = stats(server)["budgets"]
    assert spent["usd"] == pytest.approx(0.018) and spent["held_usd"] == 0  # 11 + 7 tokens
    hits = [post(server, body) for _ in range(3)]
    assert [r.headers["x-nerve-cache"] for r in hits] == ["hit"] * 3
    assert all(r.json()["usage"]["total_tokens"] == 18 for r in hits)  # the original's usage
    seen = stats(server)
    (after,) = seen["budgets"]
    assert after["usd"] == pytest.approx(0.018) and after["held_usd"] == 0
    cache = seen["cache"]
    assert (cache["hits"], cache["misses"], cache["stored"]) == (3, 1, 1)
    assert cache["tokens_saved"] == 54 and cache["cost_saved_usd"] == pytest.approx(0.054)
    assert cache["hit_rate"] == 0.75
    assert seen["calls"] == 1 and seen["by_key"]["ci"]["calls"] == 1  # upstream calls only
    assert len(upstream.requests) == 1


def test_a_hit_counts_against_the_keys_request_rate(serve, upstream, upstream2):
    server = serve(config(upstream, upstream2, keys=[{"name": "ci", "key": KEY, "rpm": 2}]))
    assert [post(server).headers["x-nerve-cache"] for _ in range(2)] == ["miss", "hit"]
    refused = post(server)
    assert refused.status_code == 429 and refused.json()["error"]["code"] == "rpm"
    assert len(upstream.requests) == 1


def test_an_entry_lives_its_ttl_and_no_longer(serve, upstream, upstream2, clock):
    server = serve(config(upstream, upstream2))
    first = post(server)
    clock.advance(3599)
    assert post(server).json()["id"] == first.json()["id"]
    clock.advance(2)
    late = post(server)
    assert late.headers["x-nerve-cache"] == "miss" and late.json()["id"] != first.json()["id"]
    assert len(upstream.requests) == 2


def test_an_answer_a_fallback_served_is_not_kept(serve, upstream, upstream2):
    """The key names the plan's first model: another's answer is not that model's answer."""
    server = serve(config(upstream, upstream2))
    upstream.script(Reply(status=500))
    fallback = post(server)
    assert fallback.headers["x-nerve-fallback"] == "true"
    assert fallback.headers["x-nerve-cache"] == "miss"
    assert post(server).headers["x-nerve-cache"] == "miss"  # the first model answers: kept
    assert post(server).headers["x-nerve-cache"] == "hit"
    assert stats(server)["cache"]["not_stored"] == {"fallback": 1}


def garbage(value: bytes, other: bytes) -> dict[str, bytes]:
    """Ways a stored value can be wrong: none of them may be served."""
    return {
        "garbage": b"this is not an entry",
        "truncated": value[:-7],
        "flipped": value[:-3] + bytes([value[-3] ^ 1]) + value[-2:],
        "other version": b"NVC2" + value[len(MAGIC) :],
        "another key's": other,
        "oversized": value + b"x" * 1_100_000,
    }


def spoil_entry(tmp_path: Path, answer_id: str, spoil: str) -> None:
    """Write a bad value over the entry that holds `answer_id`, straight into the table."""
    with closing(sqlite3.connect(tmp_path / ".nerve" / "nerve.db")) as db, db:
        rows = db.execute("SELECT key, value FROM response_cache").fetchall()
        ((key, value),) = [(k, v) for k, v in rows if answer_id.encode() in v]
        other = next(v for k, v in rows if k != key)
        bad = garbage(value, other)[spoil]
        db.execute("UPDATE response_cache SET value = ? WHERE key = ?", (bad, key))


@pytest.mark.parametrize(
    "spoil", ["garbage", "truncated", "flipped", "other version", "another key's", "oversized"]
)
def test_a_bad_entry_in_the_store_is_a_miss_and_is_replaced(
    serve, upstream, upstream2, tmp_path, spoil
):
    server = serve(config(upstream, upstream2))
    first = post(server)
    post(server, {**BODY, "messages": [{"role": "user", "content": "another question"}]})
    spoil_entry(tmp_path, first.json()["id"], spoil)
    again = post(server)
    assert again.status_code == 200 and again.headers["x-nerve-cache"] == "miss"
    assert again.json()["id"] != first.json()["id"] and len(upstream.requests) == 3
    replaced = post(server)
    assert replaced.headers["x-nerve-cache"] == "hit"
    assert replaced.json()["id"] == again.json()["id"]
    assert stats(server)["cache"]["bad_entries"] == 1


async def test_a_bad_entry_in_redis_is_a_miss_and_is_replaced(
    serve, upstream, upstream2, redis_url, redis_prefix, redis_client
):
    server = serve(
        config(upstream, upstream2, redis={"url": redis_url, "key_prefix": redis_prefix})
    )
    first = post(server)
    client = redis_client()
    (name,) = [k async for k in client.scan_iter(match=f"{redis_prefix}cache:*")]
    assert 0 < await client.pttl(name) <= 3600 * 1000  # SET PX: Redis forgets it at the TTL
    await client.set(name, "garbage")
    again = post(server)
    assert again.headers["x-nerve-cache"] == "miss" and again.json()["id"] != first.json()["id"]
    assert post(server).json()["id"] == again.json()["id"] and len(upstream.requests) == 2


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_redis_down_never_fails_a_call(serve, upstream, upstream2, clock, caplog):
    url = f"redis://127.0.0.1:{closed_port()}/0"
    with caplog.at_level(logging.WARNING, logger="nerve.gateway"):
        server = serve(config(upstream, upstream2, redis={"url": url}))
        answers = [post(server) for _ in range(3)]
        clock.advance(2)  # past retry_seconds: tried again, failing again
        answers.append(post(server))
    assert [r.status_code for r in answers] == [200] * 4
    assert {r.headers["x-nerve-cache"] for r in answers} == {"skip"}
    assert {r.headers["x-nerve-cache-reason"] for r in answers} == {"unavailable"}
    assert len(upstream.requests) == 4
    down = [r for r in caplog.records if "CACHE DOWN" in r.getMessage()]
    assert len(down) == 1 and "Redis at" in down[0].getMessage()


def test_a_locked_sqlite_store_never_fails_a_call(serve, upstream, upstream2, clock, caplog,
                                                  tmp_path):  # fmt: skip
    server = serve(config(upstream, upstream2))
    assert post(server, {**BODY, "max_tokens": 3}).status_code == 200  # the table is open
    with caplog.at_level(logging.WARNING, logger="nerve.gateway"):
        with closing(sqlite3.connect(tmp_path / ".nerve" / "nerve.db")) as db:
            db.execute("BEGIN IMMEDIATE")  # another process holds the write lock
            locked = post(server)
            assert locked.status_code == 200 and locked.headers["x-nerve-cache"] == "miss"
            resting = post(server)  # down: not asked again before retry_seconds
            assert resting.status_code == 200
            assert resting.headers["x-nerve-cache-reason"] == "unavailable"
            db.rollback()
        clock.advance(2)
        back = post(server)
        assert back.headers["x-nerve-cache"] == "miss"
        assert post(server).json()["id"] == back.json()["id"]
    messages = [r.getMessage() for r in caplog.records]
    assert sum("CACHE DOWN" in m for m in messages) == 1
    assert sum("CACHE BACK" in m for m in messages) == 1
    assert len(upstream.requests) == 4
    assert stats(server)["cache"]["errors"] == 1
