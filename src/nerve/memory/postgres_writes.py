"""PostgreSQL's `write(ops)`: a batch of memory writes in one transaction, versioned (ME-3).

The same steps as SQLite's (sqlite_writes.py), one round trip per step whatever the batch size
(arrays through unnest). Raising a user's version takes that user's row lock in user_versions
until COMMIT, so two transactions writing one user commit in the order of their versions: a
reader that sees version v sees every write up to v. The users of a batch are locked in sorted
order, so two batches cannot deadlock on them; the rare deadlock left (a record created by
another transaction between the owner lookup and the delete) is retried by the store.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from nerve.memory.codec import COLUMNS, UPSERT, Row, change_row, dedupe, finite, record_row
from nerve.memory.model import Record
from nerve.memory.ops import Op, in_order, known_users, removed_ids

__all__ = ["put_at_once", "puts_alone", "write"]

_TYPES = ("text",) * 9 + ("float8",) * 4 + ("int8", "int8")  # COLUMNS, then version
_PUT = (
    f"INSERT INTO records ({', '.join(COLUMNS)}, version)"
    f" SELECT {', '.join('data::json' if c == 'data' else c for c in COLUMNS)}, version"
    f" FROM unnest({', '.join(f'${i}::{t}[]' for i, t in enumerate(_TYPES, 1))})"
    f" AS t({', '.join(COLUMNS)}, version)" + UPSERT
)
_BUMP = (
    "INSERT INTO user_versions (user_id, version) SELECT u, 1 FROM unnest($1::text[]) AS u"
    " ORDER BY u ON CONFLICT (user_id) DO UPDATE SET version = user_versions.version + 1"
    " RETURNING user_id, version"
)
# A batch of puts alone (the usual one) as ONE statement, so one round trip and no BEGIN/COMMIT:
# the versions are raised in a CTE and each row joins its user's new one. A NULL user_id still
# fails (user_versions' NOT NULL), where an inner join would have dropped the row.
_ROW_TYPES = _TYPES[:-1]
_PUT_AT_ONCE = (
    "WITH bumped AS ("
    "INSERT INTO user_versions (user_id, version)"
    f" SELECT u, 1 FROM unnest(${len(_ROW_TYPES) + 1}::text[]) AS u ORDER BY u"
    " ON CONFLICT (user_id) DO UPDATE SET version = user_versions.version + 1"
    " RETURNING user_id, version)"
    f" INSERT INTO records ({', '.join(COLUMNS)}, version)"
    f" SELECT {', '.join('t.data::json' if c == 'data' else f't.{c}' for c in COLUMNS)},"
    " bumped.version"
    f" FROM unnest({', '.join(f'${i}::{t}[]' for i, t in enumerate(_ROW_TYPES, 1))})"
    f" AS t({', '.join(COLUMNS)}) JOIN bumped ON bumped.user_id = t.user_id" + UPSERT
)
_TOMBSTONES = (
    "INSERT INTO tombstones (user_id, version, record_id, at)"
    " SELECT * FROM unnest($1::text[], $2::int8[], $3::text[], $4::float8[])"
)
_APPEND_CHANGE = (
    "INSERT INTO fact_history (user_id, entity, attribute, entity_key, attribute_key, value,"
    " session_id, changed_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
)
_BATCH = 10_000  # rows per INSERT statement: bounds the arrays of a very large put

Versions = dict[str, int]


def _count(status: str) -> int:
    """Rows affected, from a command tag such as "DELETE 3"."""
    return int(status.rsplit(" ", 1)[-1])


def puts_alone(ops: Sequence[Op]) -> list[Record] | None:
    """The records, when `ops` are puts only and few enough for one statement."""
    if any(op.kind != "put" for op in ops):
        return None
    records = [r for op in ops for r in op.args[0]]
    return records if len(records) <= _BATCH else None


async def put_at_once(db: Any, records: Sequence[Record]) -> None:
    """Puts as one statement on `db` (a pool or a connection), its own transaction."""
    rows = dedupe(records)
    if not rows:
        return
    users = sorted({row[1] for row in rows}, key=lambda u: (u is None, u or ""))
    await db.execute(_PUT_AT_ONCE, *[list(c) for c in zip(*rows, strict=True)], users)


# `conn` is an asyncpg connection (or a pool's proxy of one): Any, as asyncpg-stubs types the two
# apart while both take the same calls.
async def write(conn: Any, ops: Sequence[Op], at: float) -> list[int]:
    """Run `ops` in order on `conn`, inside a transaction the caller holds; their counts."""
    owners: set[str] = set()
    doomed = removed_ids(ops)
    if doomed:
        rows = await conn.fetch("SELECT user_id FROM records WHERE id = ANY($1::text[])", doomed)
        owners = {row[0] for row in rows}
    versions = await _bump(conn, known_users(ops) | owners)
    return await in_order(
        ops, lambda records: _put(conn, records, versions), lambda op: _run(conn, op, versions, at)
    )


async def _bump(conn: Any, users: set[str]) -> Versions:
    if not users:
        return {}
    rows = await conn.fetch(_BUMP, sorted(users))
    return {str(row[0]): int(row[1]) for row in rows}


async def _version(conn: Any, versions: Versions, user: str) -> int:
    if user not in versions:  # a record another transaction created after the owner lookup
        versions.update(await _bump(conn, {user}))
    return versions[user]


async def _put(conn: Any, records: Sequence[Record], versions: Versions) -> None:
    rows: list[Row] = [(*row, await _version(conn, versions, row[1])) for row in dedupe(records)]
    for start in range(0, len(rows), _BATCH):
        part = rows[start : start + _BATCH]
        await conn.execute(_PUT, *[list(column) for column in zip(*part, strict=True)])


async def _delete(conn: Any, ids: Sequence[str], versions: Versions, at: float) -> int:
    if not ids:
        return 0
    rows = await conn.fetch(
        "DELETE FROM records WHERE id = ANY($1::text[]) RETURNING id, user_id", list(ids)
    )
    users = [str(row[1]) for row in rows]
    numbers = [await _version(conn, versions, user) for user in users]
    await conn.execute(_TOMBSTONES, users, numbers, [row[0] for row in rows], [at] * len(rows))
    return len(rows)


async def _run(conn: Any, op: Op, versions: Versions, at: float) -> int:
    a = op.args
    if op.kind == "delete":
        return await _delete(conn, a[0], versions, at)
    elif op.kind == "delete_user":
        status = await conn.execute("DELETE FROM records WHERE user_id = $1", a[0])
        await conn.execute("DELETE FROM fact_history WHERE user_id = $1", a[0])
        version = await _version(conn, versions, a[0])
        await conn.execute(_TOMBSTONES, [a[0]], [version], [None], [at])
        return _count(status)
    elif op.kind == "touch":
        await conn.execute(
            "UPDATE records SET accessed_at = $2, access_count = access_count + 1"
            " WHERE id = ANY($1::text[])",
            list(a[0]),
            finite(a[1], "touch at"),
        )
    elif op.kind == "put_fact":
        history = change_row(a[1])
        await _put(conn, [a[0]], versions)
        await conn.execute(_APPEND_CHANGE, *history)
    elif op.kind == "replace_with_summary":
        record_row(a[1])  # refuse a bad summary before deleting anything
        await _delete(conn, a[0], versions, at)  # first: a summary among the ids survives
        await _put(conn, [a[1]], versions)
    else:
        raise ValueError(f"unknown memory write {op.kind!r}")
    return 0
