"""Record <-> row, shared by both backends so they store and return exactly the same values.

A row is a tuple in `COLUMNS` order; `data` travels as JSON text (orjson). Both backends refuse,
before any write, what one of them would store differently: the NUL character (PostgreSQL text
cannot hold it; SQLite can) and a NaN time or importance (SQLite stores NaN as NULL, PostgreSQL
as NaN). Inside `data`, orjson writes NaN and infinities as null, the same on both.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from typing import Any, Protocol

import orjson

from nerve.memory.model import FactChange, Record
from nerve.memory.store import Query

__all__ = [
    "COLUMNS",
    "ENTRY",
    "SELECT",
    "TOMBSTONE_SECONDS",
    "UPSERT",
    "Fetched",
    "Row",
    "change_row",
    "check_change",
    "check_finite",
    "check_record",
    "dedupe",
    "fact_key",
    "finite",
    "query_sql",
    "record_row",
    "row_change",
    "row_record",
]

COLUMNS = (
    "id",
    "user_id",
    "tier",
    "kind",
    "intent",
    "language",
    "session_id",
    "data",
    "text",
    "importance",
    "created_at",
    "updated_at",
    "accessed_at",
    "access_count",
)
Row = tuple[Any, ...]


class Fetched(Protocol):
    """A row as a driver returns it (sqlite3.Row, asyncpg.Record): indexable by position."""

    def __getitem__(self, index: int, /) -> Any: ...


SELECT = f"SELECT {', '.join(COLUMNS)} FROM records"
# What the search index reads (model.Entry), in that order: no data to decode.
ENTRY = "SELECT id, user_id, kind, session_id, created_at, text, version FROM records"
# The tail of a versioned upsert: the row's columns, then the version, replace every field.
UPSERT = " ON CONFLICT (id) DO UPDATE SET " + ", ".join(
    f"{c} = excluded.{c}" for c in (*COLUMNS[1:], "version")
)
# How long a deletion's tombstone is kept. A search cache validated within this time can be
# brought up to date from the tombstones; one left unvalidated longer is rebuilt instead.
TOMBSTONE_SECONDS = 86_400.0

# orjson writes NUL as \u0000; an escaped backslash before "u0000" is not a NUL.
_NUL_ESCAPE = re.compile(rb"(?<!\\)(?:\\\\)*\\u0000")


def _no_nul(value: str | None, what: str) -> None:
    if value is not None and "\x00" in value:
        raise ValueError(f"{what} contains a NUL character, which the store does not accept")


def finite(value: float, what: str) -> float:
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{what} must be a finite number, not {number}")
    return number


def record_row(record: Record) -> Row:
    data = orjson.dumps(record.data)
    if b"\\u0000" in data and _NUL_ESCAPE.search(data):
        raise ValueError(
            f"record {record.id}: data contains a NUL character, which the store does not accept"
        )
    for name in ("id", "user_id", "intent", "language", "session_id", "text"):
        _no_nul(getattr(record, name), f"record {record.id}: {name}")
    return (
        record.id,
        record.user_id,
        record.tier,
        record.kind,
        record.intent,
        record.language,
        record.session_id,
        data.decode(),
        record.text,
        finite(record.importance, f"record {record.id}: importance"),
        finite(record.created_at, f"record {record.id}: created_at"),
        finite(record.updated_at or record.created_at, f"record {record.id}: updated_at"),
        finite(record.accessed_at, f"record {record.id}: accessed_at"),
        int(record.access_count),
    )


def row_record(row: Fetched) -> Record:
    return Record(
        id=row[0],
        user_id=row[1],
        tier=row[2],
        kind=row[3],
        intent=row[4],
        language=row[5],
        session_id=row[6],
        data=orjson.loads(row[7]),
        text=row[8],
        importance=row[9],
        created_at=row[10],
        updated_at=row[11],
        accessed_at=row[12],
        access_count=row[13],
    )


def dedupe(records: Iterable[Record]) -> list[Row]:
    """Rows for `records`, one per id, the last one winning (as a sequence of upserts would)."""
    rows = {record.id: record_row(record) for record in records}
    return list(rows.values())


def fact_key(text: str) -> str:
    """How an entity or attribute is matched: as `fact_id` does, trimmed and case-folded."""
    return text.strip().lower()


def change_row(change: FactChange) -> Row:
    """(user_id, entity, attribute, entity_key, attribute_key, value, session_id, changed_at)."""
    for name in ("user_id", "entity", "attribute", "value", "session_id"):
        _no_nul(getattr(change, name), f"fact change {name}")
    return (
        change.user_id,
        change.entity,
        change.attribute,
        fact_key(change.entity),
        fact_key(change.attribute),
        change.value,
        change.session_id,
        finite(change.changed_at, "fact change changed_at"),
    )


def row_change(row: Fetched) -> FactChange:
    """From (user_id, entity, attribute, value, session_id, changed_at)."""
    return FactChange(
        user_id=row[0],
        entity=row[1],
        attribute=row[2],
        value=row[3],
        session_id=row[4],
        changed_at=row[5],
    )


def query_sql(query: Query, mark: Callable[[int], str]) -> tuple[str, list[Any]]:
    """The SELECT for `query`, with placeholders from `mark(n)` (n counts from 1), and its
    parameters. Filters are ANDed; `since` is inclusive, `until` exclusive; newest first."""
    if query.limit is not None and query.limit < 0:
        raise ValueError(f"query limit must be None or >= 0, not {query.limit}")
    params: list[Any] = [query.user_id]
    where = [f"user_id = {mark(1)}"]
    for column in ("intent", "tier", "kind", "session_id"):
        value = getattr(query, column)
        if value is not None:
            params.append(value)
            where.append(f"{column} = {mark(len(params))}")
    for bound, op in ((query.since, ">="), (query.until, "<")):
        if bound is not None:
            params.append(float(bound))
            where.append(f"created_at {op} {mark(len(params))}")
    sql = f"{SELECT} WHERE {' AND '.join(where)} ORDER BY created_at DESC, id DESC"
    if query.limit is not None:
        params.append(query.limit)
        sql += f" LIMIT {mark(len(params))}"
    return sql, params


def check_finite(*values: float) -> None:
    for value in values:
        if not math.isfinite(value):
            raise ValueError(f"{value!r} cannot be stored: times and importance must be finite")


def check_record(record: Record) -> None:
    """Refuse now what the store would refuse later (the backends' own row check, and JSON's
    lack of NaN): an acknowledged write the store rejects would block every flush after it."""
    record_row(record)
    check_finite(record.importance, record.created_at, record.updated_at, record.accessed_at)


def check_change(change: FactChange) -> None:
    change_row(change)
    check_finite(change.changed_at)
