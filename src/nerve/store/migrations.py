"""The schema's migrations applied: `migrate_sqlite`, `migrate_postgres`, called at open.

The pending migrations (the ordered lists per backend in store/migrations_sql.py) run in one
transaction together with their rows in `schema_version`, under a lock (SQLite's write lock, a
PostgreSQL advisory lock), so concurrent openers apply each migration once and a crash leaves
the previous version intact. To change the schema, append a `Migration` to both lists there.
"""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3
import time
from typing import TYPE_CHECKING

from nerve.store.migrations_sql import POSTGRES, SQLITE, Migration

if TYPE_CHECKING:  # asyncpg is only needed by the PostgreSQL backend
    import aiosqlite
    import asyncpg

__all__ = [
    "POSTGRES",
    "SQLITE",
    "Migration",
    "SchemaTooNew",
    "migrate_postgres",
    "migrate_sqlite",
    "prepare_sqlite",
    "quote_ident",
]


class SchemaTooNew(RuntimeError):
    """The database was migrated by a newer nerve than this one."""


def _pending(current: int, migrations: list[Migration]) -> list[Migration]:
    """The migrations still to apply to a database at `current`."""
    latest = migrations[-1].version
    if current > latest:
        raise SchemaTooNew(
            f"the memory database is at schema version {current}, newer than this nerve knows "
            f"({latest}); upgrade nerve or point it at another database"
        )
    return [m for m in migrations if m.version > current]


VERSION_TABLE = (
    "CREATE TABLE IF NOT EXISTS schema_version ("
    " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at DOUBLE PRECISION NOT NULL)"
)


async def migrate_sqlite(db: aiosqlite.Connection) -> list[int]:
    """Apply what is missing; returns the versions applied. `db` is in autocommit mode."""
    await db.execute("BEGIN IMMEDIATE")
    try:
        await db.execute(VERSION_TABLE)
        rows = await db.execute_fetchall("SELECT COALESCE(MAX(version), 0) FROM schema_version")
        pending = _pending(int(next(iter(rows))[0]), SQLITE)
        for migration in pending:
            for statement in migration.statements:
                await db.execute(statement)
            await db.execute(
                "INSERT INTO schema_version VALUES (?, ?, ?)",
                (migration.version, migration.name, time.time()),
            )
        await db.execute("COMMIT")
    except BaseException:
        await db.rollback()
        raise
    return [m.version for m in pending]


async def prepare_sqlite(db: aiosqlite.Connection, *, patience: float = 10.0) -> None:
    """WAL mode, then the migrations, retried for up to `patience` seconds while other
    connections do the same to a brand-new file: switching its journal mode takes locks that
    SQLite refuses at once ("database is locked") rather than wait and risk a deadlock.

    The pragma's answer row is read to the end: a statement left unfinished keeps its read
    transaction (its snapshot) open, and every later BEGIN IMMEDIATE on the connection then fails
    at once, for good, as soon as another connection has written (seen here: 9 of 10 times
    with four connections opening one new file together)."""
    deadline, pause = time.monotonic() + patience, 0.005
    while True:
        try:
            await db.execute_fetchall("PRAGMA journal_mode = WAL")
            await migrate_sqlite(db)
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() > deadline:
                raise
        await asyncio.sleep(pause)
        pause = min(2 * pause, 0.1)


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


async def migrate_postgres(
    conn: asyncpg.Connection | asyncpg.pool.PoolConnectionProxy, schema: str
) -> list[int]:
    """Create `schema` if missing and apply what is missing; `conn`'s search_path is `schema`."""
    key = hashlib.blake2b(f"nerve.memory:{schema}".encode(), digest_size=8).digest()
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock($1)", int.from_bytes(key, signed=True))
        await conn.execute(f"CREATE SCHEMA IF NOT EXISTS {quote_ident(schema)}")
        await conn.execute(VERSION_TABLE)
        current = await conn.fetchval("SELECT COALESCE(MAX(version), 0) FROM schema_version")
        pending = _pending(int(current), POSTGRES)
        for migration in pending:
            for statement in migration.statements:
                await conn.execute(statement)
            await conn.execute(
                "INSERT INTO schema_version VALUES ($1, $2, $3)",
                migration.version,
                migration.name,
                time.time(),
            )
    return [m.version for m in pending]
