"""Where jobs and the mail monitor's last-seen UIDs live: the memory database (`storage.url`).

Tables `jobs` and `mail_seen` (migration 3 of `nerve.store.migrations`). A job's `due_at` is
when its pending firing is due; `next_run` is when a scheduler should act on it: `due_at`, or
the end of a claim's lease. A firing's states, all in the row:

    pending (claimed_by NULL, next_run = due_at)  --claim-->  claimed (owner, next_run = lease end)
    claimed --finish--> delivered (one-shot: deleted; cron: pending at its next time)
    claimed --release--> pending (the channel could not take it just now)
    claimed, lease ended --> due again: another replica may claim it (its owner died)

Replicas claim by compare-and-set on `next_run` (`claim`), so two schedulers on one database
fire a firing once. Same protocol as `nerve.agents.store`: SQLite (one connection) and
PostgreSQL (an asyncpg pool), both migrated at open.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from nerve.store.connections import PostgresPool, SQLiteConnection
from nerve.store.url import SQLiteURL, parse_store_url

if TYPE_CHECKING:  # asyncpg is only needed by the PostgreSQL backend
    pass

__all__ = ["Job", "JobStore", "PostgresJobStore", "SQLiteJobStore", "job_store_from_url"]

_COLUMNS = (
    "id, user_id, channel, chat_id, text, mode, cron, due_at, next_run, claimed_by, created_at"
)

_SOONEST = "ORDER BY next_run, id"
_RELEASE = "UPDATE jobs SET next_run = due_at, claimed_by = NULL"  # back to pending
Page = tuple[float, str] | None  # (next_run, id) of the last job of the page before


@dataclass(frozen=True, slots=True)
class Job:
    id: str
    user_id: str
    channel: str
    chat_id: str
    text: str
    mode: str  # "notify" | "execute"
    cron: str | None  # None: a one-shot reminder
    due_at: float  # epoch seconds of the pending firing
    next_run: float  # when a scheduler acts: due_at, or the end of a claim's lease
    claimed_by: str | None
    created_at: float


def _job(row: Sequence[Any]) -> Job:
    id_, user_id, channel, chat_id, text, mode, cron, due_at, next_run, claimed_by, created = row
    return Job(id_, user_id, channel, chat_id, text, mode, cron, float(due_at), float(next_run),
               claimed_by, float(created))  # fmt: skip


class JobStore(Protocol):
    async def open(self) -> None: ...
    async def close(self) -> None: ...
    async def insert(self, job: Job) -> None: ...
    async def of_user(self, user_id: str) -> list[Job]: ...
    async def get(self, job_id: str) -> Job | None: ...
    async def delete(self, user_id: str, job_id: str) -> bool: ...

    async def due(self, now: float, limit: int, after: Page = None) -> list[Job]:
        """Jobs whose next_run <= now, soonest first; past `after` (next_run, id) when paging."""

    async def next_after(self, now: float) -> float | None:
        """The soonest next_run later than `now`, if any."""

    async def claim(self, job_id: str, expected: float, owner: str, until: float) -> bool:
        """Atomically: if next_run is still `expected`, set claimed_by=owner, next_run=until."""

    async def finish(self, job_id: str, owner: str, next_due: float | None) -> None:
        """After firing: delete (next_due None) or move to next_due, if `owner` still holds it."""

    async def release(self, job_id: str, owner: str) -> None:
        """Undelivered: pending again at its due time, if `owner` still holds it."""

    async def mail_seen(self, account: str) -> tuple[int, int] | None:
        """(uidvalidity, last_uid) of a mail account, if recorded."""

    async def advance_mail(
        self, account: str, old: tuple[int, int] | None, new: tuple[int, int], at: float
    ) -> bool:
        """Atomically move an account's (uidvalidity, last_uid) from `old` (None: unrecorded) to
        `new`; False when another monitor moved it first."""


class SQLiteJobStore(SQLiteConnection):
    what = "the job store"

    async def _fetch(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        db = self._db
        async with self._lock:
            return list(await db.execute_fetchall(sql, args))

    async def _exec(self, sql: str, args: Sequence[Any] = ()) -> int:
        db = self._db
        async with self._lock:
            cursor = await db.execute(sql, args)
            return cursor.rowcount

    async def insert(self, job: Job) -> None:
        await self._exec(f"INSERT INTO jobs ({_COLUMNS}) VALUES ({', '.join('?' * 11)})", _row(job))

    async def of_user(self, user_id: str) -> list[Job]:
        sql = f"SELECT {_COLUMNS} FROM jobs WHERE user_id = ? ORDER BY due_at, id"
        return [_job(r) for r in await self._fetch(sql, (user_id,))]

    async def get(self, job_id: str) -> Job | None:
        rows = await self._fetch(f"SELECT {_COLUMNS} FROM jobs WHERE id = ?", (job_id,))
        return _job(rows[0]) if rows else None

    async def delete(self, user_id: str, job_id: str) -> bool:
        return (
            await self._exec("DELETE FROM jobs WHERE id = ? AND user_id = ?", (job_id, user_id)) > 0
        )

    async def due(self, now: float, limit: int, after: Page = None) -> list[Job]:
        page, args = ("AND (next_run, id) > (?, ?)", after) if after else ("", ())
        sql = f"SELECT {_COLUMNS} FROM jobs WHERE next_run <= ? {page} {_SOONEST} LIMIT ?"
        return [_job(r) for r in await self._fetch(sql, (now, *args, limit))]

    async def next_after(self, now: float) -> float | None:
        rows = await self._fetch("SELECT MIN(next_run) FROM jobs WHERE next_run > ?", (now,))
        return None if rows[0][0] is None else float(rows[0][0])

    async def claim(self, job_id: str, expected: float, owner: str, until: float) -> bool:
        sql = "UPDATE jobs SET claimed_by = ?, next_run = ? WHERE id = ? AND next_run = ?"
        return await self._exec(sql, (owner, until, job_id, expected)) == 1

    async def finish(self, job_id: str, owner: str, next_due: float | None) -> None:
        if next_due is None:
            await self._exec("DELETE FROM jobs WHERE id = ? AND claimed_by = ?", (job_id, owner))
        else:
            sql = (
                "UPDATE jobs SET due_at = ?, next_run = ?, claimed_by = NULL"
                " WHERE id = ? AND claimed_by = ?"
            )
            await self._exec(sql, (next_due, next_due, job_id, owner))

    async def release(self, job_id: str, owner: str) -> None:
        sql = f"{_RELEASE} WHERE id = ? AND claimed_by = ?"
        await self._exec(sql, (job_id, owner))

    async def mail_seen(self, account: str) -> tuple[int, int] | None:
        sql = "SELECT uidvalidity, last_uid FROM mail_seen WHERE account = ?"
        rows = await self._fetch(sql, (account,))
        return (int(rows[0][0]), int(rows[0][1])) if rows else None

    async def advance_mail(
        self, account: str, old: tuple[int, int] | None, new: tuple[int, int], at: float
    ) -> bool:
        if old is None:
            sql = "INSERT INTO mail_seen VALUES (?, ?, ?, ?) ON CONFLICT (account) DO NOTHING"
            return await self._exec(sql, (account, *new, at)) == 1
        sql = (
            "UPDATE mail_seen SET uidvalidity = ?, last_uid = ?, updated_at = ?"
            " WHERE account = ? AND uidvalidity = ? AND last_uid = ?"
        )
        return await self._exec(sql, (*new, at, account, *old)) == 1


def _row(job: Job) -> tuple[Any, ...]:
    return (
        job.id, job.user_id, job.channel, job.chat_id, job.text, job.mode, job.cron,
        job.due_at, job.next_run, job.claimed_by, job.created_at,
    )  # fmt: skip


class PostgresJobStore(PostgresPool):
    what = "the job store"

    async def insert(self, job: Job) -> None:
        marks = ", ".join(f"${i}" for i in range(1, 12))
        await self._db.execute(f"INSERT INTO jobs ({_COLUMNS}) VALUES ({marks})", *_row(job))

    async def of_user(self, user_id: str) -> list[Job]:
        sql = f"SELECT {_COLUMNS} FROM jobs WHERE user_id = $1 ORDER BY due_at, id"
        return [_job(tuple(r)) for r in await self._db.fetch(sql, user_id)]

    async def get(self, job_id: str) -> Job | None:
        row = await self._db.fetchrow(f"SELECT {_COLUMNS} FROM jobs WHERE id = $1", job_id)
        return _job(tuple(row)) if row is not None else None

    async def delete(self, user_id: str, job_id: str) -> bool:
        status = await self._db.execute(
            "DELETE FROM jobs WHERE id = $1 AND user_id = $2", job_id, user_id
        )
        return _count(status) > 0

    async def due(self, now: float, limit: int, after: Page = None) -> list[Job]:
        page, args = ("AND (next_run, id) > ($3, $4)", after) if after else ("", ())
        sql = f"SELECT {_COLUMNS} FROM jobs WHERE next_run <= $1 {page} {_SOONEST} LIMIT $2"
        return [_job(tuple(r)) for r in await self._db.fetch(sql, now, limit, *args)]

    async def next_after(self, now: float) -> float | None:
        soonest = await self._db.fetchval("SELECT MIN(next_run) FROM jobs WHERE next_run > $1", now)
        return None if soonest is None else float(soonest)

    async def claim(self, job_id: str, expected: float, owner: str, until: float) -> bool:
        sql = "UPDATE jobs SET claimed_by = $1, next_run = $2 WHERE id = $3 AND next_run = $4"
        return _count(await self._db.execute(sql, owner, until, job_id, expected)) == 1

    async def finish(self, job_id: str, owner: str, next_due: float | None) -> None:
        if next_due is None:
            sql = "DELETE FROM jobs WHERE id = $1 AND claimed_by = $2"
            await self._db.execute(sql, job_id, owner)
        else:
            sql = (
                "UPDATE jobs SET due_at = $1, next_run = $1, claimed_by = NULL"
                " WHERE id = $2 AND claimed_by = $3"
            )
            await self._db.execute(sql, next_due, job_id, owner)

    async def release(self, job_id: str, owner: str) -> None:
        sql = f"{_RELEASE} WHERE id = $1 AND claimed_by = $2"
        await self._db.execute(sql, job_id, owner)

    async def mail_seen(self, account: str) -> tuple[int, int] | None:
        sql = "SELECT uidvalidity, last_uid FROM mail_seen WHERE account = $1"
        row = await self._db.fetchrow(sql, account)
        return (int(row[0]), int(row[1])) if row is not None else None

    async def advance_mail(
        self, account: str, old: tuple[int, int] | None, new: tuple[int, int], at: float
    ) -> bool:
        if old is None:
            sql = "INSERT INTO mail_seen VALUES ($1, $2, $3, $4) ON CONFLICT (account) DO NOTHING"
            return _count(await self._db.execute(sql, account, *new, at)) == 1
        sql = (
            "UPDATE mail_seen SET uidvalidity = $1, last_uid = $2, updated_at = $3"
            " WHERE account = $4 AND uidvalidity = $5 AND last_uid = $6"
        )
        return _count(await self._db.execute(sql, *new, at, account, *old)) == 1


def _count(status: str) -> int:
    """The row count of an asyncpg command status such as 'UPDATE 1'."""
    return int(str(status).rsplit(" ", 1)[-1])


def job_store_from_url(url: str) -> JobStore:
    """The store for `storage.url`, not yet opened; ValueError names the scheme, never the URL."""
    where = parse_store_url(url, what="job store")
    if isinstance(where, SQLiteURL):
        return SQLiteJobStore(where.path)
    return PostgresJobStore(where.dsn, schema=where.schema)
