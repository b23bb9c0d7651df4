"""Where admin sessions are anchored: the memory database (`storage.url`), so every worker and
replica on it accepts the same tokens and refuses the same revoked ones (SPEC AD-2, ST).

    admin_state    one row (id 1): the session signing secret and, when nerve generated the
                   password, its scrypt salt and hash (NULL while `$NERVE_ADMIN_PASSWORD` is used)
    admin_revoked  session ids logged out before they expire; pruned once expired

`settle` is one upsert: the first opener's secret wins, a password is stored only where none is,
and every opener reads back what is stored, so replicas starting together agree. Same protocol
as `nerve.agents.store`: SQLite (one connection) and PostgreSQL (a small asyncpg pool).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from nerve.store.connections import PostgresPool, SQLiteConnection
from nerve.store.url import SQLiteURL, parse_store_url

__all__ = [
    "AdminState",
    "AdminStore",
    "PostgresAdminStore",
    "SQLiteAdminStore",
    "admin_store_from_url",
]


@dataclass(frozen=True, slots=True)
class AdminState:
    secret: bytes
    salt: bytes | None = None  # the stored (generated or adopted) password's scrypt salt
    hash: bytes | None = None  # ... and hash; None: no password stored

    def row(self) -> tuple[str, str | None, str | None]:
        hex_or_none = [v.hex() if v is not None else None for v in (self.salt, self.hash)]
        return (self.secret.hex(), hex_or_none[0], hex_or_none[1])


def _state(row: Sequence[Any]) -> AdminState:
    secret, salt, hash_ = row
    return AdminState(
        bytes.fromhex(secret), *(bytes.fromhex(v) if v else None for v in (salt, hash_))
    )


class AdminStore(Protocol):
    async def open(self) -> None:
        """Connect and apply pending migrations; a no-op when already open."""

    async def close(self) -> None: ...

    async def load(self) -> AdminState | None:
        """The stored state, or None before the first `settle`."""

    async def settle(self, candidate: AdminState) -> AdminState:
        """Store `candidate`'s secret unless one is stored, and its password (when it has one)
        unless one is stored; return what is stored now."""

    async def revoke(self, sid: str, expires_at: float, now: float) -> None:
        """Refuse `sid` from now until `expires_at`; forget revocations expired by `now`."""

    async def revoked(self, sid: str) -> bool: ...


# One statement on both backends: insert, or fill the password only where none is stored.
_SETTLE = (
    "INSERT INTO admin_state (id, secret, password_salt, password_hash, created_at)"
    " VALUES (1, {0}, {1}, {2}, {3}) ON CONFLICT (id) DO UPDATE SET"
    " password_salt = CASE WHEN admin_state.password_hash IS NULL"
    "  THEN excluded.password_salt ELSE admin_state.password_salt END,"
    " password_hash = COALESCE(admin_state.password_hash, excluded.password_hash)"
    " RETURNING secret, password_salt, password_hash"
)
_LOAD = "SELECT secret, password_salt, password_hash FROM admin_state WHERE id = 1"


class SQLiteAdminStore(SQLiteConnection):
    what = "the admin session store"

    async def load(self) -> AdminState | None:
        async with self._lock:
            rows = list(await self._db.execute_fetchall(_LOAD))
        return _state(rows[0]) if rows else None

    async def settle(self, candidate: AdminState) -> AdminState:
        async with self._lock:
            rows = list(
                await self._db.execute_fetchall(
                    _SETTLE.format("?", "?", "?", "?"), (*candidate.row(), time.time())
                )
            )
        return _state(rows[0])

    async def revoke(self, sid: str, expires_at: float, now: float) -> None:
        async with self._lock:
            db = self._db
            await db.execute("BEGIN IMMEDIATE")
            try:
                await db.execute(
                    "INSERT INTO admin_revoked (sid, expires_at) VALUES (?, ?)"
                    " ON CONFLICT (sid) DO NOTHING",
                    (sid, expires_at),
                )
                await db.execute("DELETE FROM admin_revoked WHERE expires_at <= ?", (now,))
                await db.execute("COMMIT")
            except BaseException:
                await db.rollback()
                raise

    async def revoked(self, sid: str) -> bool:
        async with self._lock:
            rows = await self._db.execute_fetchall(
                "SELECT 1 FROM admin_revoked WHERE sid = ?", (sid,)
            )
        return bool(list(rows))


class PostgresAdminStore(PostgresPool):
    what = "the admin session store"

    async def load(self) -> AdminState | None:
        row = await self._db.fetchrow(_LOAD)
        return _state(tuple(row)) if row is not None else None

    async def settle(self, candidate: AdminState) -> AdminState:
        row = await self._db.fetchrow(
            _SETTLE.format("$1", "$2", "$3", "$4"), *candidate.row(), time.time()
        )
        assert row is not None  # INSERT ... RETURNING always returns the row
        return _state(tuple(row))

    async def revoke(self, sid: str, expires_at: float, now: float) -> None:
        async with self._db.acquire() as conn, conn.transaction():
            await conn.execute(
                "INSERT INTO admin_revoked (sid, expires_at) VALUES ($1, $2)"
                " ON CONFLICT (sid) DO NOTHING",
                sid,
                expires_at,
            )
            await conn.execute("DELETE FROM admin_revoked WHERE expires_at <= $1", now)

    async def revoked(self, sid: str) -> bool:
        return (
            await self._db.fetchval("SELECT 1 FROM admin_revoked WHERE sid = $1", sid) is not None
        )


def admin_store_from_url(url: str) -> AdminStore:
    """The store for `storage.url`, not yet opened. Raises ValueError naming the scheme, never
    the URL (it may hold a password)."""
    where = parse_store_url(url, what="admin session store")
    if isinstance(where, SQLiteURL):
        return SQLiteAdminStore(where.path)
    # Two connections: logins and logouts are rare; a verify is one indexed read.
    return PostgresAdminStore(where.dsn, schema=where.schema, min_size=1, max_size=2)
