"""The managed keys in the store (`storage.url`): the `access_keys` table on SQLite or PostgreSQL.

One row per key ever made: its name (never reused), SHA-256 (hex), last 4 characters, policy
(JSON: routes, models, users, rpm, tpm, max_parallel, budget) and when it was made and revoked.
Every statement is the same on both backends but for its placeholders; `active()` is one read
of a small table, since every process runs it twice a second. Connections as for the admin
store (`nerve.store.connections`): one SQLite connection, or a small asyncpg pool.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from nerve.access.keystore import KeyStore, ManagedKey
from nerve.access.principal import Budget, Principal
from nerve.errors import RequestError
from nerve.store.connections import PostgresPool, SQLiteConnection
from nerve.store.url import SQLiteURL, parse_store_url

__all__ = ["PostgresKeyStore", "SQLiteKeyStore", "keystore_from_url"]

_POLICY = ("routes", "models", "users", "rpm", "tpm", "max_parallel", "budget")
_COLUMNS = "name, digest, hint, policy, created_at, revoked_at"
_ALL = f"SELECT {_COLUMNS} FROM access_keys ORDER BY created_at, name"
_ACTIVE = f"SELECT {_COLUMNS} FROM access_keys WHERE revoked_at IS NULL ORDER BY created_at, name"
# DO NOTHING on either unique column (name, digest): no exception to translate per driver.
_ADD = (
    f"INSERT INTO access_keys ({_COLUMNS}) VALUES ({{0}}, {{1}}, {{2}}, {{3}}, {{4}}, {{5}})"
    " ON CONFLICT DO NOTHING RETURNING name"
)
_NAMED = "SELECT 1 FROM access_keys WHERE name = {0}"
_REVOKE = (
    "UPDATE access_keys SET revoked_at = {0} WHERE name = {1} AND revoked_at IS NULL RETURNING name"
)


def _row(key: ManagedKey) -> tuple[str, str, str, str, float, float | None]:
    p = key.principal
    policy = {k: v for k, v in p.view().items() if k in _POLICY}
    return (p.name, key.digest.hex(), p.hint, json.dumps(policy), key.created_at, key.revoked_at)


def _globs(value: Any) -> tuple[str, ...] | None:
    return None if value is None else tuple(str(v) for v in value)


def _record(row: Sequence[Any]) -> ManagedKey:
    name, digest, hint, policy, created_at, revoked_at = row
    p = json.loads(policy)
    budget = p.get("budget")
    principal = Principal(
        name=name,
        client=f"key:{name}",
        hint=hint,
        routes=_globs(p.get("routes")),
        models=_globs(p.get("models")),
        users=_globs(p.get("users")),
        rpm=p.get("rpm"),
        tpm=p.get("tpm"),
        max_parallel=p.get("max_parallel"),
        budget=Budget(float(budget["usd"]), budget["period"]) if budget else None,
        managed=True,
    )
    return ManagedKey(bytes.fromhex(digest), principal, created_at, revoked_at)


def _conflict(key: ManagedKey, name_taken: bool) -> RequestError:
    name = key.principal.name
    if name_taken:
        message = f"a key named {name!r} exists already (a revoked key's name is not reused)"
    else:
        message = "this key is stored already, under another name"
    return RequestError(message, param="name", code="key_exists")


class SQLiteKeyStore(SQLiteConnection):
    what = "the key store"

    async def active(self) -> list[ManagedKey]:
        async with self._lock:
            rows = await self._db.execute_fetchall(_ACTIVE)
        return [_record(r) for r in rows]

    async def all(self) -> list[ManagedKey]:
        async with self._lock:
            rows = await self._db.execute_fetchall(_ALL)
        return [_record(r) for r in rows]

    async def add(self, key: ManagedKey) -> None:
        async with self._lock:
            added = list(await self._db.execute_fetchall(_ADD.format(*["?"] * 6), _row(key)))
            if added:
                return
            named = await self._db.execute_fetchall(_NAMED.format("?"), (key.principal.name,))
        raise _conflict(key, bool(list(named)))

    async def revoke(self, name: str, at: float) -> bool:
        async with self._lock:
            rows = await self._db.execute_fetchall(_REVOKE.format("?", "?"), (at, name))
        return bool(list(rows))


class PostgresKeyStore(PostgresPool):
    what = "the key store"

    async def active(self) -> list[ManagedKey]:
        return [_record(tuple(r)) for r in await self._db.fetch(_ACTIVE)]

    async def all(self) -> list[ManagedKey]:
        return [_record(tuple(r)) for r in await self._db.fetch(_ALL)]

    async def add(self, key: ManagedKey) -> None:
        placeholders = [f"${i}" for i in range(1, 7)]
        if await self._db.fetchval(_ADD.format(*placeholders), *_row(key)) is not None:
            return
        named = await self._db.fetchval(_NAMED.format("$1"), key.principal.name)
        raise _conflict(key, named is not None)

    async def revoke(self, name: str, at: float) -> bool:
        return await self._db.fetchval(_REVOKE.format("$1", "$2"), at, name) is not None


def keystore_from_url(url: str) -> KeyStore:
    """The store for `storage.url`, not yet opened. Raises ValueError naming the scheme, never
    the URL (it may hold a password)."""
    where = parse_store_url(url, what="key store")
    if isinstance(where, SQLiteURL):
        return SQLiteKeyStore(where.path)
    # Two connections: the keyring's poll is one read every half second; writes are rare.
    return PostgresKeyStore(where.dsn, schema=where.schema, min_size=1, max_size=2)
