"""SQLite's `write(ops)`: a batch of memory writes in one transaction, versioned (ME-2, ME-3).

Runs inside the store's write transaction (BEGIN IMMEDIATE: no other writer, in this process or
another, until COMMIT). First the owners of the ids to delete are looked up, then every user the
batch writes gets its version raised by one (migration 4), then the ops run in order: records
carry their user's new version, deletions leave tombstones. A search cache in any process reads
those to catch up (nerve.memory.cache).
"""

from __future__ import annotations

from collections.abc import Sequence

import aiosqlite

from nerve.memory.codec import COLUMNS, UPSERT, change_row, dedupe, finite, record_row
from nerve.memory.model import Record
from nerve.memory.ops import Op, in_order, known_users, removed_ids

__all__ = ["chunks", "marks", "write"]

_CHUNK = 500  # values per IN (...) or VALUES list: well under SQLite's bound-parameter limit

_PUT = (
    f"INSERT INTO records ({', '.join(COLUMNS)}, version)"
    f" VALUES ({', '.join('?' * (len(COLUMNS) + 1))})" + UPSERT
)
_APPEND_CHANGE = (
    "INSERT INTO fact_history (user_id, entity, attribute, entity_key, attribute_key, value,"
    " session_id, changed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)
_TOMBSTONE = "INSERT INTO tombstones (user_id, version, record_id, at) VALUES (?, ?, ?, ?)"

Versions = dict[str, int]


def chunks(ids: Sequence[str]) -> list[list[str]]:
    unique = list(dict.fromkeys(ids))
    return [unique[i : i + _CHUNK] for i in range(0, len(unique), _CHUNK)]


def marks(n: int) -> str:
    return ", ".join("?" * n)


async def write(db: aiosqlite.Connection, ops: Sequence[Op], at: float) -> list[int]:
    """Run `ops` in order on `db`, inside a transaction the caller holds; their counts."""
    owners: set[str] = set()
    for chunk in chunks(removed_ids(ops)):
        rows = await db.execute_fetchall(
            f"SELECT user_id FROM records WHERE id IN ({marks(len(chunk))})", chunk
        )
        owners.update(row[0] for row in rows)
    versions = await _bump(db, known_users(ops) | owners)
    return await in_order(
        ops, lambda records: _put(db, records, versions), lambda op: _run(db, op, versions, at)
    )


async def _bump(db: aiosqlite.Connection, users: set[str]) -> Versions:
    versions: Versions = {}
    for chunk in chunks(sorted(users)):
        rows = await db.execute_fetchall(
            "INSERT INTO user_versions (user_id, version) VALUES "
            + ", ".join("(?, 1)" for _ in chunk)
            + " ON CONFLICT (user_id) DO UPDATE SET version = version + 1"
            " RETURNING user_id, version",
            chunk,
        )
        versions.update((str(user), int(version)) for user, version in rows)
    return versions


async def _version(db: aiosqlite.Connection, versions: Versions, user: str) -> int:
    if user not in versions:  # not foreseen (it cannot be, under the write lock): raise it now
        versions.update(await _bump(db, {user}))
    return versions[user]


async def _put(db: aiosqlite.Connection, records: Sequence[Record], versions: Versions) -> None:
    rows = [(*row, await _version(db, versions, row[1])) for row in dedupe(records)]
    await db.executemany(_PUT, rows)


async def _delete(
    db: aiosqlite.Connection, ids: Sequence[str], versions: Versions, at: float
) -> int:
    gone: list[tuple[str, int, str, float]] = []
    for chunk in chunks(ids):
        rows = await db.execute_fetchall(
            f"DELETE FROM records WHERE id IN ({marks(len(chunk))}) RETURNING id, user_id", chunk
        )
        for record_id, user in rows:
            gone.append((user, await _version(db, versions, user), record_id, at))
    await db.executemany(_TOMBSTONE, gone)
    return len(gone)


async def _run(db: aiosqlite.Connection, op: Op, versions: Versions, at: float) -> int:
    a = op.args
    if op.kind == "delete":
        return await _delete(db, a[0], versions, at)
    elif op.kind == "delete_user":
        cursor = await db.execute("DELETE FROM records WHERE user_id = ?", (a[0],))
        await db.execute("DELETE FROM fact_history WHERE user_id = ?", (a[0],))
        await db.execute(_TOMBSTONE, (a[0], await _version(db, versions, a[0]), None, at))
        return cursor.rowcount
    elif op.kind == "touch":
        when = finite(a[1], "touch at")
        for chunk in chunks(a[0]):
            await db.execute(
                "UPDATE records SET accessed_at = ?, access_count = access_count + 1"
                f" WHERE id IN ({marks(len(chunk))})",
                [when, *chunk],
            )
    elif op.kind == "put_fact":
        history = change_row(a[1])
        await _put(db, [a[0]], versions)
        await db.execute(_APPEND_CHANGE, history)
    elif op.kind == "replace_with_summary":
        record_row(a[1])  # refuse a bad summary before deleting anything
        await _delete(db, a[0], versions, at)  # first: a summary among the ids survives
        await _put(db, [a[1]], versions)
    else:
        raise ValueError(f"unknown memory write {op.kind!r}")
    return 0
