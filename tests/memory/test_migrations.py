"""The schema on both backends (ME-3): data outlives the process, migrations apply once however
the store is opened, and a schema newer than this nerve is refused."""

from __future__ import annotations

import asyncio
import sqlite3
from contextlib import closing

import asyncpg
import pytest

from nerve.memory.postgres import PostgresStore
from nerve.memory.sqlite import SQLiteStore
from nerve.memory.store import Query
from nerve.store.migrations import POSTGRES, SQLITE, SchemaTooNew
from tests.memory.factories import T0, fact, rec


async def test_records_persist_across_close_and_open(store, reopen):
    """ME-3: a SQLite file, a PostgreSQL schema: closing loses nothing."""
    records = [rec(n=i) for i in range(3)]
    await store.put(records)
    await store.put_fact(*fact("u", "alice", "city", "Chennai", T0))
    await store.close()
    again = reopen()
    await again.open()
    assert len(await again.query(Query("u"))) == 4
    assert len(await again.fact_history("u", "alice", "city")) == 1


async def schema_versions(store) -> list[int]:
    if isinstance(store, SQLiteStore):
        with closing(sqlite3.connect(store.path)) as db:
            return [v for (v,) in db.execute("SELECT version FROM schema_version ORDER BY 1")]
    assert isinstance(store, PostgresStore)
    conn = await asyncpg.connect(store.dsn)
    try:
        rows = await conn.fetch(f'SELECT version FROM "{store.schema}".schema_version ORDER BY 1')
    finally:
        await conn.close()
    return [row[0] for row in rows]


async def test_migrations_apply_once_however_often_and_concurrently_the_store_opens(store, reopen):
    """ME-3: open is idempotent: on the same store, on other stores, at the same time."""
    await store.put([rec()])
    await store.open()
    others = [reopen() for _ in range(3)]
    await asyncio.gather(*(other.open() for other in others))
    expected = [m.version for m in (SQLITE if isinstance(store, SQLiteStore) else POSTGRES)]
    assert await schema_versions(store) == expected
    assert len(await others[0].query(Query("u"))) == 1


async def test_a_database_from_a_newer_nerve_is_refused(store, reopen):
    """ME-3: an unknown schema version stops open instead of corrupting data."""
    await store.close()
    if isinstance(store, SQLiteStore):
        with closing(sqlite3.connect(store.path)) as db, db:
            db.execute("INSERT INTO schema_version VALUES (999, 'future', 0)")
    else:
        conn = await asyncpg.connect(store.dsn)
        await conn.execute(f"INSERT INTO \"{store.schema}\".schema_version VALUES (999, 'f', 0)")
        await conn.close()
    with pytest.raises(SchemaTooNew, match="999"):
        await reopen().open()
