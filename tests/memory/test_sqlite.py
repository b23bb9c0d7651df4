"""What only the SQLite backend has to prove (ME-3): WAL, its pragmas, and that neither readers
nor a second writer on the same file ever meet "database is locked"."""

from __future__ import annotations

import asyncio
import sqlite3
from contextlib import closing

import pytest

from nerve.memory.model import Record
from nerve.memory.sqlite import SQLiteStore
from nerve.memory.store import Query


def rec(user: str = "u", n: int = 0) -> Record:
    return Record.make(
        user_id=user, tier="episodic", intent="note", data={"n": n}, importance=0.5,
        created_at=1_800_000_000.0 + n,
    )  # fmt: skip


@pytest.fixture
async def store(tmp_path):
    opened = SQLiteStore(tmp_path / "deep" / "er" / "memory.db")
    await opened.open()
    yield opened
    await opened.close()


async def test_the_file_is_in_wal_mode_with_its_pragmas_and_its_directory_is_created(store):
    """ME-3: WAL, synchronous=FULL, busy_timeout, foreign keys; parents made at open."""
    assert store.path.exists()
    with closing(sqlite3.connect(store.path)) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    pragmas = {}
    for name in ("synchronous", "busy_timeout", "foreign_keys"):
        rows = await store._db.execute_fetchall(f"PRAGMA {name}")
        pragmas[name] = next(iter(rows))[0]
    assert pragmas == {"synchronous": 2, "busy_timeout": 10_000, "foreign_keys": 1}


async def test_reads_do_not_wait_for_an_open_write_transaction(store):
    """ME-3: readers see the last committed state while the writer is mid-transaction."""
    first = rec(n=1)
    await store.put([first])
    async with store._write() as db:
        await db.execute("DELETE FROM records")
        during = await asyncio.wait_for(store.query(Query("u")), 5)
    assert during == [first]
    assert await store.query(Query("u")) == []


async def test_two_stores_on_one_file_write_at_once_without_database_is_locked(tmp_path):
    """ME-3: as two processes would: BEGIN IMMEDIATE and busy_timeout make them take turns."""
    stores = [SQLiteStore(tmp_path / "shared.db") for _ in range(2)]
    for s in stores:
        await s.open()
    try:

        async def write(s: SQLiteStore, user: str) -> None:
            for i in range(100):
                await s.put([rec(user, i)])

        await asyncio.wait_for(
            asyncio.gather(*(write(s, f"{k}{n}") for k, s in enumerate(stores) for n in "ab")),
            60,
        )
        for user in ("0a", "0b", "1a", "1b"):
            assert len(await stores[0].query(Query(user))) == 100
    finally:
        for s in stores:
            await s.close()


async def test_an_in_memory_store_works_and_forgets_everything_when_closed():
    """ME-3: ":memory:" has no second connection; reads share the writer."""
    store = SQLiteStore(":memory:")
    await store.open()
    try:
        await store.put([rec(n=i) for i in range(3)])
        assert len(await store.query(Query("u"))) == 3
        assert len([r async for r in store.scan()]) == 3
    finally:
        await store.close()
    await store.open()
    try:
        assert await store.query(Query("u")) == []
    finally:
        await store.close()


async def test_a_closed_store_says_so():
    """ME-3: using a store that is not open is a clear error, not a hang."""
    store = SQLiteStore(":memory:")
    with pytest.raises(RuntimeError, match="not open"):
        await store.put([rec()])
    with pytest.raises(RuntimeError, match="not open"):
        await SQLiteStore("unused.db").query(Query("u"))


async def test_many_connections_opening_a_brand_new_file_at_once_all_succeed(tmp_path):
    """ST: workers and replicas starting together on a fresh database (memory, the agents, jobs
    and admin stores each open their own connection). SQLite refuses some of those first opens
    at once instead of waiting; each must retry, not fail start-up. (tests/admin/test_sessions.py
    then writes through four such connections at once.)"""
    from nerve.store.connections import SQLiteConnection

    for trial in range(20):
        path = tmp_path / f"fresh{trial}.db"
        opening = [SQLiteStore(path) for _ in range(3)] + [SQLiteConnection(path) for _ in range(3)]
        try:
            await asyncio.wait_for(asyncio.gather(*(c.open() for c in opening)), 60)
        finally:
            for connection in opening:
                await connection.close()
        with closing(sqlite3.connect(path)) as db:
            assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
            assert db.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] >= 4
