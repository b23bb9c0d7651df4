"""Connections for the small stores that share memory's `storage.url` (agents, jobs).

Each holds one connection (SQLite) or one pool (PostgreSQL), opened and migrated with the same
migrations as memory, so one database carries every table. A subclass writes only its queries:

    class SQLiteThings(SQLiteConnection):
        what = "the thing store"
        async def get(self, key): async with self._lock: return await self._db.execute_fetchall(...)
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

import aiosqlite

from nerve.memory.backends import open_postgres_pool
from nerve.memory.migrations import prepare_sqlite

if TYPE_CHECKING:  # asyncpg is the optional extra nerve[postgres]
    import asyncpg

__all__ = ["PostgresPool", "SQLiteConnection"]

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
