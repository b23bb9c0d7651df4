"""Connections for the stores that share `storage.url` (memory, agents, jobs, keys, events).

Each holds one connection (SQLite) or one pool (PostgreSQL), opened and migrated with
store.migrations, so one database carries every table. A subclass writes only its queries:

    class SQLiteThings(SQLiteConnection):
        what = "the thing store"
        async def get(self, key): async with self._lock: return await self._db.execute_fetchall(...)
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

import aiosqlite

from nerve.store.migrations import migrate_postgres, prepare_sqlite, quote_ident

if TYPE_CHECKING:  # asyncpg is the optional extra nerve[postgres]
    import asyncpg

__all__ = ["PostgresPool", "SQLiteConnection", "open_postgres_pool"]

_BUSY_MS = 10_000  # a writer waits this long for another process's transaction (replicas)


class SQLiteConnection:
    """One autocommit connection in WAL mode; `_lock` serialises its statements."""

    what = "the store"

    def __init__(self, path: str | Path) -> None:
        self.path = path if str(path) == ":memory:" else Path(path)
        self._lock = asyncio.Lock()
        self._conn: aiosqlite.Connection | None = None

    async def open(self) -> None:
        if self._conn is not None:
            return
        if isinstance(self.path, Path):
            self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = await aiosqlite.connect(self.path, isolation_level=None)
        try:
            await conn.execute_fetchall(f"PRAGMA busy_timeout = {_BUSY_MS}")
            await prepare_sqlite(conn)
        except BaseException:
            await conn.close()
            raise
        self._conn = conn

    async def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()

    @property
    def _db(self) -> aiosqlite.Connection:
        if self._conn is None:
            raise RuntimeError(f"{self.what} at {self.path} is not open")
        return self._conn


class PostgresPool:
    """A pool whose connections see only `schema`, migrated at open."""

    what = "the store"

    def __init__(
        self, dsn: str, *, schema: str = "public", min_size: int = 1, max_size: int = 4
    ) -> None:
        self.dsn = dsn
        self.schema = schema
        self._sizes = (min_size, max_size)
        self._pool: asyncpg.Pool | None = None

    async def open(self) -> None:
        """Connect and migrate; a no-op when already open."""
        if self._pool is None:
            self._pool = await open_postgres_pool(
                self.dsn, self.schema, min_size=self._sizes[0], max_size=self._sizes[1]
            )

    async def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()

    @property
    def _db(self) -> asyncpg.Pool:
        if self._pool is None:
            raise RuntimeError(f"{self.what} (schema {self.schema}) is not open")
        return self._pool


async def open_postgres_pool(
    dsn: str, schema: str, *, min_size: int = 1, max_size: int = 10
) -> asyncpg.Pool:
    """A pool whose connections see only `schema`, migrated; closed again if migrating fails."""
    import asyncpg  # the optional extra: imported when a PostgreSQL store opens

    pool = await asyncpg.create_pool(
        dsn,
        min_size=min_size,
        max_size=max_size,
        server_settings={"search_path": quote_ident(schema)},
    )
    try:
        async with pool.acquire() as conn:
            await migrate_postgres(conn, schema)
    except BaseException:
        await pool.close()
        raise
    return pool
