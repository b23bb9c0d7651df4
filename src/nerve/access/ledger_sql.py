"""`SqlLedger`: keys' spend and token windows in the store (`storage.url`), SQLite or PostgreSQL.

Every process on one SQLite file or one PostgreSQL database enforces the same limits. Table
`access_ledger` (migration 7) holds, per key, one row per window and one row per hold in it:

    win "usd:1767225600"            used = settled dollars; expires_at = period end + hold_seconds
    win "usd:1767225600/<hold id>"  held = the hold's dollars; expires_at = reserved + hold_seconds
    win "tpm:1767225540"            the same in tokens, for the calendar minute

A window's held amount is the sum of its live hold rows. A reservation is one transaction:
forget the key's expired rows, read each window, insert the holds only if every window fits.
SQLite serialises it with BEGIN IMMEDIATE (the database's write lock); PostgreSQL with a
transaction-scoped advisory lock per (schema, key), so reservations of one key queue and those
of different keys do not. Settle deletes the hold rows and adds what was used to their windows.

Stale holds: a process that dies between reserve and settle leaves hold rows behind. They stop
counting `hold_seconds` (default 600: ten times the default upstream timeout) after they were
made, and the key's next reservation deletes them. A settle that late bills nothing (and one
that comes twice finds no hold row): `hold_seconds` must exceed the longest call.

A window's row outlives its end by `hold_seconds`, so a call that straddles a period boundary
is billed to the period it reserved in; after that, a settle for it is a no-op. Windows of
`total` budgets never expire. The ledger keeps no history: past periods' rows are deleted.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any, Protocol

from nerve.access.ledger import Charge, Hold, Spend
from nerve.access.ledger_windows import (
    budget_window,
    fits,
    hold_windows,
    new_hold,
    refusal,
    spend_of,
    windows,
)
from nerve.access.principal import Principal
from nerve.store.connections import PostgresPool, SQLiteConnection
from nerve.store.url import SQLiteURL, parse_store_url

if TYPE_CHECKING:
    import aiosqlite
    import asyncpg

    from nerve.clock import Clock

__all__ = ["SqlLedger"]

# Statements in SQLite's placeholders; PostgreSQL's ($1, $2, ...) are derived (`_dollars`).
_PRUNE = "DELETE FROM access_ledger WHERE key = ? AND expires_at <= ?"
# One window's used and live held: its own row and its hold rows ("<win>/<id>" sorts between
# "<win>/" and "<win>0": byte order, which the PostgreSQL column's COLLATE "C" also keeps).
_STATE = (
    "SELECT COALESCE(SUM(CASE WHEN win = ? THEN used END), 0),"
    " COALESCE(SUM(CASE WHEN win > ? AND expires_at > ? THEN held END), 0)"
    " FROM access_ledger WHERE key = ? AND win >= ? AND win < ?"
)
_WINDOW = (
    "INSERT INTO access_ledger (key, win, used, held, expires_at) VALUES (?, ?, 0, 0, ?)"
    " ON CONFLICT (key, win) DO NOTHING"
)
_HOLD = "INSERT INTO access_ledger (key, win, used, held, expires_at) VALUES (?, ?, 0, ?, ?)"
_RELEASE = "DELETE FROM access_ledger WHERE key = ? AND win = ? RETURNING expires_at"
_BILL = "UPDATE access_ledger SET used = used + ? WHERE key = ? AND win = ?"


class _Tx(Protocol):
    async def rows(self, sql: str, *args: Any) -> list[Sequence[Any]]: ...


class _Backend(Protocol):
    async def open(self) -> None: ...

    async def close(self) -> None: ...

    def transaction(self, key: str) -> AbstractAsyncContextManager[_Tx]:
        """One transaction, atomic against every other on `key`, in any process."""


class SqlLedger:
    """The `Ledger` on `storage.url`; `open()` it before use (it migrates), `close()` after."""

    def __init__(self, url: str, *, clock: Clock = time.time, hold_seconds: float = 600) -> None:
        if hold_seconds <= 0:
            raise ValueError("hold_seconds must be > 0")
        where = parse_store_url(url, what="spend ledger")
        self._backend: _Backend
        if isinstance(where, SQLiteURL):
            self._backend = _SQLite(where.path)
        else:
            self._backend = _Postgres(where.dsn, schema=where.schema, min_size=1, max_size=4)
        self._clock = clock
        self.hold_seconds = hold_seconds

    async def open(self) -> None:
        await self._backend.open()

    async def close(self) -> None:
        await self._backend.close()

    async def reserve(self, principal: Principal, charge: Charge) -> Hold:
        now = self._clock()
        wanted = windows(principal, charge, now)
        if not wanted:
            return Hold(principal.name, charge, None, None)
        key = principal.name
        async with self._backend.transaction(key) as tx:
            await tx.rows(_PRUNE, key, now)
            for window in wanted:
                used, held = await _state(tx, key, window.name, now)
                if not fits(window, used, held):  # raised inside: rolled back, nothing held
                    raise refusal(principal, window, used, held, now)
            hold = new_hold(principal, charge, wanted)
            for window in wanted:
                await tx.rows(_WINDOW, key, window.name, window.expires_at(self.hold_seconds))
                await tx.rows(
                    _HOLD,
                    key,
                    f"{window.name}/{hold.id}",
                    window.amount,
                    now + self.hold_seconds,
                )
        return hold

    async def settle(self, hold: Hold, actual: Charge) -> None:
        if not hold.id:
            return
        now = self._clock()
        async with self._backend.transaction(hold.key) as tx:
            for window in hold_windows(hold, actual):
                released = await tx.rows(_RELEASE, hold.key, f"{window.name}/{hold.id}")
                if released and released[0][0] > now:  # a stale hold is not billed
                    await tx.rows(_BILL, window.amount, hold.key, window.name)

    async def spend(self, principals: list[Principal]) -> list[Spend]:
        now = self._clock()
        found = []
        for principal in principals:
            window = budget_window(principal, now)
            if window is None:
                continue
            async with self._backend.transaction(principal.name) as tx:
                used, held = await _state(tx, principal.name, window.name, now)
            found.append(spend_of(principal, window, used, held))
        return found


async def _state(tx: _Tx, key: str, win: str, now: float) -> tuple[float, float]:
    rows = await tx.rows(_STATE, win, f"{win}/", now, key, win, f"{win}0")
    used, held = rows[0]
    return float(used), float(held)


class _SQLite(SQLiteConnection):
    what = "the spend ledger"

    @asynccontextmanager
    async def transaction(self, key: str) -> AsyncIterator[_Tx]:
        async with self._lock:
            db = self._db
            await db.execute("BEGIN IMMEDIATE")  # the write lock: other processes wait
            try:
                yield _SQLiteTx(db)
                await db.execute("COMMIT")
            except BaseException:
                await db.rollback()
                raise


class _SQLiteTx:
    def __init__(self, db: aiosqlite.Connection) -> None:
        self._db = db

    async def rows(self, sql: str, *args: Any) -> list[Sequence[Any]]:
        return list(await self._db.execute_fetchall(sql, args))


class _Postgres(PostgresPool):
    what = "the spend ledger"

    @asynccontextmanager
    async def transaction(self, key: str) -> AsyncIterator[_Tx]:
        lock = hashlib.blake2b(f"nerve.ledger:{self.schema}:{key}".encode(), digest_size=8)
        async with self._db.acquire() as conn, conn.transaction():
            await conn.execute(
                "SELECT pg_advisory_xact_lock($1)", int.from_bytes(lock.digest(), signed=True)
            )
            yield _PostgresTx(conn)


class _PostgresTx:
    def __init__(self, conn: asyncpg.Connection | asyncpg.pool.PoolConnectionProxy) -> None:
        self._conn = conn

    async def rows(self, sql: str, *args: Any) -> list[Sequence[Any]]:
        return [tuple(row) for row in await self._conn.fetch(_dollars(sql), *args)]


_CACHE: dict[str, str] = {}


def _dollars(sql: str) -> str:
    """`?` placeholders as PostgreSQL's `$1, $2, ...` (our statements quote no `?`)."""
    if sql not in _CACHE:
        numbers = iter(range(1, sql.count("?") + 1))
        _CACHE[sql] = re.sub(r"\?", lambda _: f"${next(numbers)}", sql)
    return _CACHE[sql]
