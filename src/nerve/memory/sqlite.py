"""The embedded backend (ME-3): one SQLite file in WAL mode, nothing to install.

Concurrency: every write goes through one writer connection, one transaction at a time (an
asyncio lock, then BEGIN IMMEDIATE so other processes wait on busy_timeout instead of failing
mid-transaction). Reads use a small pool of read-only connections: in WAL mode they read the
last committed state and never wait for the writer. So however many tasks write and read at
once, none sees "database is locked". A ":memory:" database has no second connection to read
from; there reads share the writer, under the lock.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiosqlite

from nerve.memory import history, sqlite_writes
from nerve.memory.codec import (
    ENTRY,
    SELECT,
    TOMBSTONE_SECONDS,
    fact_key,
    query_sql,
    row_change,
    row_record,
)
from nerve.memory.model import Entry, FactChange, Record
from nerve.memory.ops import Op, Writes
from nerve.memory.sqlite_writes import chunks, marks
from nerve.memory.store import Deleted, Query
from nerve.store.migrations import prepare_sqlite

__all__ = ["SQLiteStore"]

_BUSY_MS = 10_000  # another process holding the write lock: wait this long before failing


class SQLiteStore(Writes):
    """`MemoryStore` on a SQLite file (created with its parent directory) or ":memory:"."""

    def __init__(self, path: str | Path, *, readers: int = 4, scan_batch: int = 1000) -> None:
        self.path = path if str(path) == ":memory:" else Path(path)
        self._readers = readers if str(path) != ":memory:" else 0
        self._scan_batch = scan_batch
        self._lock = asyncio.Lock()
        self._writer: aiosqlite.Connection | None = None
        self._all_readers: list[aiosqlite.Connection] = []
        self._idle: asyncio.Queue[aiosqlite.Connection] = asyncio.Queue()
        self._pruned = 0.0  # when tombstones were last pruned

    async def open(self) -> None:
        """Connect and migrate; a no-op when already open (the owner of a store may open it
        before handing it to `Memory`, which opens it again)."""
        if self._writer is not None:
            return
        if isinstance(self.path, Path):
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            # FULL: a commit is on disk when it returns, so the memory WAL may checkpoint right
            # after it, and a direct write (no WAL) is durable when acknowledged. Writes come
            # in batches, so this costs one fsync per batch.
            self._writer = await self._connect("PRAGMA synchronous = FULL")
            await prepare_sqlite(self._writer)  # WAL mode and the migrations
            for _ in range(self._readers):
                reader = await self._connect("PRAGMA query_only = ON")
                self._all_readers.append(reader)
                self._idle.put_nowait(reader)
        except BaseException:
            await self.close()
            raise

    async def _connect(self, *pragmas: str) -> aiosqlite.Connection:
        db = await aiosqlite.connect(self.path, isolation_level=None)
        try:
            for pragma in (f"PRAGMA busy_timeout = {_BUSY_MS}", "PRAGMA foreign_keys = ON"):
                await db.execute_fetchall(pragma)  # to the end: no statement left open
            for pragma in pragmas:
                await db.execute_fetchall(pragma)  # to the end: no statement left open
        except BaseException:
            await db.close()
            raise
        return db

    async def close(self) -> None:
        readers, self._all_readers = self._all_readers, []
        writer, self._writer = self._writer, None
        self._idle = asyncio.Queue()
        try:
            for reader in readers:
                await reader.close()
            if writer is not None:
                with contextlib.suppress(sqlite3.Error):  # statistics only: never fail a close
                    await writer.execute("PRAGMA optimize")
                await writer.close()
        except BaseException:
            # Cancelled mid-close (a second Ctrl-C): stop every connection's thread anyway, or
            # the interpreter would wait for those threads forever at exit.
            for connection in [*readers, *([writer] if writer is not None else [])]:
                connection.stop()
            raise

    @property
    def _db(self) -> aiosqlite.Connection:
        if self._writer is None:
            raise RuntimeError(f"the SQLite store at {self.path} is not open")
        return self._writer

    @asynccontextmanager
    async def _write(self) -> AsyncIterator[aiosqlite.Connection]:
        """One write transaction at a time, rolled back on any error or cancellation.
        Statements run in order on the connection's thread, so a ROLLBACK queued after a
        cancelled BEGIN still finds and ends that transaction."""
        async with self._lock:
            db = self._db
            try:
                await db.execute("BEGIN IMMEDIATE")
                yield db
                await db.execute("COMMIT")
            except BaseException:
                await db.rollback()
                raise

    @asynccontextmanager
    async def _read(self) -> AsyncIterator[aiosqlite.Connection]:
        if not self._readers:
            async with self._lock:
                yield self._db
            return
        if self._writer is None:  # closed: fail instead of waiting for a reader forever
            raise RuntimeError(f"the SQLite store at {self.path} is not open")
        reader = await self._idle.get()
        try:
            yield reader
        finally:
            self._idle.put_nowait(reader)

    async def _fetch(self, sql: str, params: Sequence[Any]) -> list[Record]:
        async with self._read() as db:
            rows = await db.execute_fetchall(sql, params)
        return [row_record(row) for row in rows]

    async def write(self, ops: Sequence[Op]) -> list[int]:
        """`ops` in one transaction, in order (sqlite_writes.py); what each returned."""
        if not ops:
            return []
        at = time.time()
        async with self._write() as db:
            counts = await sqlite_writes.write(db, ops, at)
            if at - self._pruned > 3600:  # hourly: drop the tombstones no cache can still need
                await db.execute("DELETE FROM tombstones WHERE at < ?", (at - TOMBSTONE_SECONDS,))
                self._pruned = at
        return counts

    async def get(self, ids: Sequence[str]) -> list[Record]:
        found: list[Record] = []
        for chunk in chunks(ids):
            found += await self._fetch(f"{SELECT} WHERE id IN ({marks(len(chunk))})", chunk)
        return found

    async def query(self, query: Query) -> list[Record]:
        sql, params = query_sql(query, lambda _: "?")
        return await self._fetch(sql, params)

    async def version(self, user_id: str) -> int:
        async with self._read() as db:
            rows = await db.execute_fetchall(
                "SELECT version FROM user_versions WHERE user_id = ?", (user_id,)
            )
        return int(next(iter(rows))[0]) if rows else 0

    async def deleted(self, user_id: str, since: int) -> Deleted:
        async with self._read() as db:
            rows = await db.execute_fetchall(
                "SELECT record_id FROM tombstones WHERE user_id = ? AND version > ?",
                (user_id, since),
            )
        ids = [row[0] for row in rows]
        return Deleted([i for i in ids if i is not None], None in ids)

    async def changed(self, user_id: str, since: int) -> AsyncIterator[Entry]:
        """Keyset pages by (version, id) on records_user_version; no connection is held between
        pages."""
        where: str = "version > ?"
        params: list[object] = [since]  # then: after the last (version, id) seen
        while True:
            async with self._read() as db:
                rows = await db.execute_fetchall(
                    f"{ENTRY} WHERE user_id = ? AND {where} ORDER BY version, id LIMIT ?",
                    (user_id, *params, self._scan_batch),
                )
            batch = [Entry(*row) for row in rows]
            for entry in batch:
                yield entry
            if len(batch) < self._scan_batch:
                return
            where, params = "(version, id) > (?, ?)", [batch[-1].version, batch[-1].id]

    async def fact_history(self, user_id: str, entity: str, attribute: str) -> list[FactChange]:
        async with self._read() as db:
            rows = await db.execute_fetchall(
                "SELECT user_id, entity, attribute, value, session_id, changed_at"
                " FROM fact_history WHERE user_id = ? AND entity_key = ? AND attribute_key = ?"
                " ORDER BY changed_at, seq",
                (user_id, fact_key(entity), fact_key(attribute)),
            )
        return [row_change(row) for row in rows]

    async def scan(self, user_id: str | None = None) -> AsyncIterator[Record]:
        """Batches of `scan_batch` by keyset (never an OFFSET, never the whole table): by
        id for all users, oldest first for one user. No connection is held between batches."""
        after: tuple[Any, ...] = (float("-inf"), "") if user_id is not None else ("",)
        while True:
            if user_id is None:
                sql = f"{SELECT} WHERE id > ? ORDER BY id LIMIT ?"
                batch = await self._fetch(sql, (*after, self._scan_batch))
            else:
                sql = (
                    f"{SELECT} WHERE user_id = ? AND (created_at, id) > (?, ?)"
                    " ORDER BY created_at, id LIMIT ?"
                )
                batch = await self._fetch(sql, (user_id, *after, self._scan_batch))
            for record in batch:
                yield record
            if len(batch) < self._scan_batch:
                return
            last = batch[-1]
            after = (last.id,) if user_id is None else (last.created_at, last.id)

    async def scan_fact_history(self, user_id: str | None = None) -> AsyncIterator[FactChange]:
        """FactHistoryStore: by seq, `scan_batch` at a time (history.py)."""
        after = 0
        while True:
            sql, params = history.page_sql(user_id, after, self._scan_batch, lambda _: "?")
            async with self._read() as db:
                rows = list(await db.execute_fetchall(sql, params))
            for row in rows:
                yield row_change(row[1:])
            if len(rows) < self._scan_batch:
                return
            after = rows[-1][0]

    async def add_fact_history(self, changes: Sequence[FactChange]) -> int:
        """FactHistoryStore: the changes not there yet, appended in one transaction."""
        rows = history.new_rows(changes)
        if not rows:
            return 0
        async with self._write() as db:
            cursor = await db.executemany(history.ADD_SQLITE, rows)
            return max(cursor.rowcount, 0)
