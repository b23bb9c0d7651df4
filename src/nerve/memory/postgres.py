"""The scale backend (ME-3): PostgreSQL through an asyncpg pool, behaving exactly as SQLite.

Every table lives in `schema` (created at open when missing): each pooled connection starts
with its search_path set to that schema alone, so statements are unqualified and nothing leaks
into `public`. Writes are `write(ops)` (postgres_writes.py): one transaction, one round trip per
step whatever the batch size. Rows and queries are built by the same codec as SQLite's.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

import asyncpg

from nerve.memory import history, postgres_writes
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
from nerve.memory.store import Deleted, Query
from nerve.store.connections import PostgresPool

__all__ = ["PostgresStore"]

_RETRIES = 3  # a deadlock (see postgres_writes) or serialization failure: run the batch again


class PostgresStore(Writes, PostgresPool):
    """`MemoryStore` on PostgreSQL; `dsn` as asyncpg takes it (postgresql://user@host/db)."""

    what = "the PostgreSQL store"

    def __init__(
        self,
        dsn: str,
        *,
        schema: str = "public",
        min_size: int = 1,
        max_size: int = 10,
        scan_batch: int = 1000,
    ) -> None:
        super().__init__(dsn, schema=schema, min_size=min_size, max_size=max_size)
        self._scan_batch = scan_batch
        self._pruned = 0.0  # when tombstones were last pruned

    async def write(self, ops: Sequence[Op]) -> list[int]:
        """`ops` in one transaction, in order; what each returned."""
        if not ops:
            return []
        alone = postgres_writes.puts_alone(ops)
        for attempt in range(_RETRIES):
            at = time.time()
            try:
                if alone is not None and at - self._pruned <= 3600:
                    await postgres_writes.put_at_once(self._db, alone)
                    return [0] * len(ops)
                async with self._db.acquire() as conn, conn.transaction():
                    counts = await postgres_writes.write(conn, ops, at)
                    if at - self._pruned > 3600:  # hourly: drop what no cache can still need
                        await conn.execute(
                            "DELETE FROM tombstones WHERE at < $1", at - TOMBSTONE_SECONDS
                        )
                        self._pruned = at
                return counts
            except (asyncpg.DeadlockDetectedError, asyncpg.SerializationError):
                if attempt == _RETRIES - 1:
                    raise
        raise AssertionError("unreachable")

    async def get(self, ids: Sequence[str]) -> list[Record]:
        if not ids:
            return []
        rows = await self._db.fetch(f"{SELECT} WHERE id = ANY($1::text[])", list(ids))
        return [row_record(row) for row in rows]

    async def query(self, query: Query) -> list[Record]:
        sql, params = query_sql(query, lambda n: f"${n}")
        rows = await self._db.fetch(sql, *params)
        return [row_record(row) for row in rows]

    async def version(self, user_id: str) -> int:
        found = await self._db.fetchval(
            "SELECT version FROM user_versions WHERE user_id = $1", user_id
        )
        return int(found) if found is not None else 0

    async def deleted(self, user_id: str, since: int) -> Deleted:
        rows = await self._db.fetch(
            "SELECT record_id FROM tombstones WHERE user_id = $1 AND version > $2",
            user_id,
            since,
        )
        ids = [row[0] for row in rows]
        return Deleted([i for i in ids if i is not None], None in ids)

    async def changed(self, user_id: str, since: int) -> AsyncIterator[Entry]:
        """Keyset pages by (version, id) on records_user_version."""
        where = "version > $2"
        params: list[object] = [since]  # then: after the last (version, id) seen
        while True:
            rows = await self._db.fetch(
                f"{ENTRY} WHERE user_id = $1 AND {where} ORDER BY version, id"
                f" LIMIT ${len(params) + 2}",
                user_id,
                *params,
                self._scan_batch,
            )
            batch = [Entry(*row) for row in rows]
            for entry in batch:
                yield entry
            if len(batch) < self._scan_batch:
                return
            where, params = "(version, id) > ($2, $3)", [batch[-1].version, batch[-1].id]

    async def fact_history(self, user_id: str, entity: str, attribute: str) -> list[FactChange]:
        rows = await self._db.fetch(
            "SELECT user_id, entity, attribute, value, session_id, changed_at"
            " FROM fact_history WHERE user_id = $1 AND entity_key = $2 AND attribute_key = $3"
            " ORDER BY changed_at, seq",
            user_id,
            fact_key(entity),
            fact_key(attribute),
        )
        return [row_change(row) for row in rows]

    async def scan(self, user_id: str | None = None) -> AsyncIterator[Record]:
        """Batches of `scan_batch` by keyset (never an OFFSET, never the whole table): by
        id for all users, oldest first for one user. No connection is held between batches."""
        after: tuple[Any, ...] = (float("-inf"), "") if user_id is not None else ("",)
        while True:
            if user_id is None:
                sql = f"{SELECT} WHERE id > $1 ORDER BY id LIMIT $2"
                rows = await self._db.fetch(sql, *after, self._scan_batch)
            else:
                sql = (
                    f"{SELECT} WHERE user_id = $1 AND (created_at, id) > ($2, $3)"
                    " ORDER BY created_at, id LIMIT $4"
                )
                rows = await self._db.fetch(sql, user_id, *after, self._scan_batch)
            batch = [row_record(row) for row in rows]
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
            sql, params = history.page_sql(user_id, after, self._scan_batch, lambda n: f"${n}")
            rows = await self._db.fetch(sql, *params)
            for row in rows:
                yield row_change(row[1:])
            if len(rows) < self._scan_batch:
                return
            after = rows[-1][0]

    async def add_fact_history(self, changes: Sequence[FactChange]) -> int:
        """FactHistoryStore: the changes not there yet, appended in one statement."""
        rows = history.new_rows(changes)
        if not rows:
            return 0
        status = await self._db.execute(history.ADD_POSTGRES, *map(list, zip(*rows, strict=True)))
        return int(status.rsplit(" ", 1)[-1])
