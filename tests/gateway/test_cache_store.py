"""Where the response cache keeps entries (SPEC OB-2), one suite over its three backends: SQLite
and PostgreSQL (`response_cache`, migration 9) and Redis. An entry is read until it expires and
never after; a newer write replaces it; expired rows are pruned by writes. A backend that
cannot be reached raises CacheDown, is logged once, and is tried again only after a rest."""

from __future__ import annotations

import logging
import socket
import sqlite3
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, closing

import pytest

from nerve.clock import ManualClock
from nerve.config import RedisConfig
from nerve.gateway.cache_store import CacheBackend, CacheDown, CacheStore, RedisBackend, SqlBackend
from tests.memory.conftest import postgres_schema  # noqa: F401 - fixture


@pytest.fixture(params=["sqlite", "postgres", "redis"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def backend(kind: str, request: pytest.FixtureRequest, closing: AsyncExitStack,
                  tmp_path) -> AsyncIterator[CacheBackend]:  # fmt: skip
    made: CacheBackend
    if kind == "redis":
        url, prefix = request.getfixturevalue("redis_url"), request.getfixturevalue("redis_prefix")
        made = RedisBackend(RedisConfig(url=url, key_prefix=prefix))
    elif kind == "sqlite":
        made = SqlBackend(f"sqlite:///{tmp_path / 'nerve.db'}")
    else:
        dsn, schema = request.getfixturevalue("postgres_schema")
        made = SqlBackend(f"{dsn}?schema={schema}")
    yield made
    await made.close()


async def test_an_entry_is_read_until_it_expires_and_a_newer_write_replaces_it(backend):
    assert await backend.get("k1", 1000.0) is None
    await backend.put("k1", b"\x00first\xff", expires=1060.0, now=1000.0)
    assert await backend.get("k1", 1000.0) == b"\x00first\xff"  # bytes, as written
    await backend.put("k1", b"second", expires=1120.0, now=1001.0)
    assert await backend.get("k1", 1001.0) == b"second"
    assert await backend.get("k2", 1001.0) is None
    if not isinstance(backend, RedisBackend):  # Redis forgets on its own clock (SET PX)
        assert await backend.get("k1", 1120.0) is None


async def test_redis_forgets_an_entry_at_its_ttl(redis_url, redis_prefix):
    backend = RedisBackend(RedisConfig(url=redis_url, key_prefix=redis_prefix))
    try:
        await backend.put("k", b"v", expires=1000.25, now=1000.0)
        assert 0 < await backend.redis.pttl(backend.prefix + "k") <= 250
    finally:
        await backend.close()


async def test_a_write_prunes_expired_rows_at_most_once_a_minute(tmp_path):
    backend = SqlBackend(f"sqlite:///{tmp_path / 'nerve.db'}")
    try:
        await backend.put("old", b"v", expires=1010.0, now=1000.0)
        await backend.put("new", b"v", expires=1500.0, now=1020.0)  # within the minute: kept
        with closing(sqlite3.connect(tmp_path / "nerve.db")) as db:
            assert db.execute("SELECT COUNT(*) FROM response_cache").fetchone() == (2,)
        await backend.put("later", b"v", expires=1600.0, now=1061.0)
        with closing(sqlite3.connect(tmp_path / "nerve.db")) as db:
            keys = {k for (k,) in db.execute("SELECT key FROM response_cache")}
        assert keys == {"new", "later"}
    finally:
        await backend.close()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("where", ["postgres", "redis"])
async def test_an_unreachable_backend_is_logged_once_and_rested(where, caplog):
    """(SQLite's way to fail, a lock held too long, is the next test.)"""
    port = closed_port()
    unreachable: CacheBackend = {
        "postgres": lambda: SqlBackend(f"postgresql://nobody@127.0.0.1:{port}/none"),
        "redis": lambda: RedisBackend(RedisConfig(url=f"redis://127.0.0.1:{port}/0")),
    }[where]()
    clock = ManualClock()
    store = CacheStore(unreachable, clock=clock, retry_seconds=5)
    with caplog.at_level(logging.WARNING, logger="nerve.gateway"):
        for _ in range(3):
            with pytest.raises(CacheDown):
                await store.get("k")
        with pytest.raises(CacheDown):
            await store.put("k", b"v", 2000.0)
        assert not store.usable()  # resting: not asked again until retry_seconds pass
        clock.advance(5)
        assert store.usable()
    down = [r.getMessage() for r in caplog.records if "CACHE DOWN" in r.getMessage()]
    assert len(down) == 1
    await store.close()


async def test_a_store_that_comes_back_is_logged_and_used_again(tmp_path, caplog):
    path = tmp_path / "nerve.db"
    backend = SqlBackend(f"sqlite:///{path}")
    clock = ManualClock()
    store = CacheStore(backend, clock=clock, retry_seconds=1)
    try:
        await store.put("k", b"v", 5000.0)
        with caplog.at_level(logging.WARNING, logger="nerve.gateway"):
            with closing(sqlite3.connect(path)) as db:
                db.execute("BEGIN IMMEDIATE")  # another process holds the write lock
                with pytest.raises(CacheDown):
                    await store.put("k", b"w", 5000.0)
                assert not store.usable()  # resting: the next call goes without it
                db.rollback()
            clock.advance(1)
            assert await store.get("k") == b"v"
        messages = [r.getMessage() for r in caplog.records]
        assert [m[:10] for m in messages if m.startswith("CACHE")] == ["CACHE DOWN", "CACHE BACK"]
    finally:
        await store.close()
