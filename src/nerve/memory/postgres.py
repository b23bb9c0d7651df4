"""The scale backend (ME-3): PostgreSQL through an asyncpg pool, behaving exactly as SQLite.

Every table lives in `schema` (created at open when missing): each pooled connection starts
with its search_path set to that schema alone, so statements are unqualified and nothing leaks
into `public`. A batch `put` is one INSERT ... SELECT FROM unnest(arrays) ON CONFLICT statement,
one round trip whatever the batch size. Rows and queries are built by the same codec as SQLite's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from nerve.memory.codec import (
    COLUMNS,
    SELECT,
    Row,
    change_row,
    dedupe,
    fact_key,
    finite,
    query_sql,
    record_row,
    row_change,
    row_record,
)
from nerve.memory.connections import PostgresPool
from nerve.memory.model import FactChange, Record
from nerve.memory.store import Query

__all__ = ["PostgresStore"]

_TYPES = ("text",) * 9 + ("float8",) * 4 + ("int8",)  # COLUMNS' array types, data as text
_PUT = (
    f"INSERT INTO records ({', '.join(COLUMNS)})"
    f" SELECT {', '.join('data::json' if c == 'data' else c for c in COLUMNS)}"
    f" FROM unnest({', '.join(f'${i}::{t}[]' for i, t in enumerate(_TYPES, 1))})"
    f" AS t({', '.join(COLUMNS)})"
    " ON CONFLICT (id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in COLUMNS if c != "id")
)
_APPEND_CHANGE = (
    "INSERT INTO fact_history (user_id, entity, attribute, entity_key, attribute_key, value,"
    " session_id, changed_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
)
_DELETE = "DELETE FROM records WHERE id = ANY($1::text[])"
_BATCH = 10_000  # rows per INSERT statement: bounds the arrays of a very large put


def _columns(rows: list[Row]) -> list[list[Any]]:
    return [list(column) for column in zip(*rows, strict=True)]


def _count(status: str) -> int:
    """Rows affected, from a command tag such as "DELETE 3"."""
    return int(status.rsplit(" ", 1)[-1])


class PostgresStore(PostgresPool):
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

    async def put(self, records: Sequence[Record]) -> None:
        rows = dedupe(records)
        if len(rows) <= _BATCH:
            if rows:
                await self._db.execute(_PUT, *_columns(rows))
            return
        async with self._db.acquire() as conn, conn.transaction():
            for start in range(0, len(rows), _BATCH):
                await conn.execute(_PUT, *_columns(rows[start : start + _BATCH]))

    async def get(self, ids: Sequence[str]) -> list[Record]:
        if not ids:
            return []
        rows = await self._db.fetch(f"{SELECT} WHERE id = ANY($1::text[])", list(ids))
        return [row_record(row) for row in rows]

    async def query(self, query: Query) -> list[Record]:
        sql, params = query_sql(query, lambda n: f"${n}")
        rows = await self._db.fetch(sql, *params)
        return [row_record(row) for row in rows]

    async def touch(self, ids: Sequence[str], at: float) -> None:
        at = finite(at, "touch at")
        if ids:
            await self._db.execute(
                "UPDATE records SET accessed_at = $2, access_count = access_count + 1"
                " WHERE id = ANY($1::text[])",
                list(ids),
                at,
            )

    async def delete(self, ids: Sequence[str]) -> int:
        if not ids:
            return 0
        return _count(await self._db.execute(_DELETE, list(ids)))

    async def delete_user(self, user_id: str) -> int:
        async with self._db.acquire() as conn, conn.transaction():
            status = await conn.execute("DELETE FROM records WHERE user_id = $1", user_id)
            await conn.execute("DELETE FROM fact_history WHERE user_id = $1", user_id)
        return _count(status)

    async def put_fact(self, record: Record, change: FactChange) -> None:
        columns, history = _columns([record_row(record)]), change_row(change)
        async with self._db.acquire() as conn, conn.transaction():
            await conn.execute(_PUT, *columns)
            await conn.execute(_APPEND_CHANGE, *history)

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

    async def replace_with_summary(self, delete_ids: Sequence[str], summary: Record) -> None:
        columns = _columns([record_row(summary)])
        async with self._db.acquire() as conn, conn.transaction():
            # Delete first: a summary whose id is among delete_ids survives.
            await conn.execute(_DELETE, list(delete_ids))
            await conn.execute(_PUT, *columns)

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
