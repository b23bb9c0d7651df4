"""Where the response cache keeps its entries: Redis with `redis.url`, else the store.

    store = CacheStore(backend_for(config))     one per process, opened on first use
    await store.get(key) -> bytes | None         raises CacheDown: treat as "no cache now"
    await store.put(key, value, expires)

`RedisBackend`: `{prefix}cache:<key>`, written with `SET PX` (Redis forgets it at the TTL). It
has a client of its own, not the shared state's: entries are bytes (that client decodes every
reply as text), and the cache's failures must not switch the rate limits and breakers to their
outage policy (resilience/shared.py): a cache outage costs only hits. `SqlBackend`: table
`response_cache` (migration 9) on `storage.url`, SQLite or PostgreSQL; a row past its
`expires_at` is never read, and a write deletes up to 500 expired rows, at most once a minute
per process.

`CacheStore` is the policy around either: every operation has a deadline (SQLite waits at most
250 ms for another writer's lock); a failure is logged once ("CACHE DOWN"), counted in `/stats`
(cache errors) and raises CacheDown; while down the backend is tried again at most once per
`retry_seconds` (CacheDown at once in between), and "CACHE BACK" is logged when it answers.
A cache that cannot be reached never fails a call: the caller answers without it.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from typing import TYPE_CHECKING, Protocol

from nerve.clock import Clock
from nerve.gateway.resilience.shared import redacted, require_redis
from nerve.gateway.stats import Stats
from nerve.store.connections import PostgresPool, SQLiteConnection
from nerve.store.url import SQLiteURL, parse_store_url

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from nerve.config import Config, RedisConfig

__all__ = ["CacheBackend", "CacheDown", "CacheStore", "RedisBackend", "SqlBackend", "backend_for"]

log = logging.getLogger("nerve.gateway")
_PRUNE_EVERY = 60.0
_BUSY_MS = 250


class CacheDown(Exception):
    """The cache's backend cannot be used now."""


class CacheBackend(Protocol):
    where: str  # for logs: which Redis, which store

    async def get(self, key: str, now: float) -> bytes | None: ...

    async def put(self, key: str, value: bytes, expires: float, now: float) -> None: ...

    async def close(self) -> None: ...


def backend_for(config: Config) -> CacheBackend:
    """Redis when the config shares state through it, else the store at `storage.url`."""
    if config.redis.url is not None:
        return RedisBackend(config.redis)
    return SqlBackend(config.storage.url)


class RedisBackend:
    def __init__(self, cfg: RedisConfig, *, redis: Redis | None = None) -> None:
        require_redis()
        from redis.asyncio import Redis
        from redis.asyncio.retry import Retry
        from redis.backoff import NoBackoff

        assert cfg.url is not None
        self.where = f"Redis at {redacted(cfg.url)}"
        self.prefix = f"{cfg.key_prefix}cache:"
        self.redis = redis or Redis.from_url(
            cfg.url, socket_timeout=cfg.timeout_seconds,
            socket_connect_timeout=cfg.timeout_seconds, retry=Retry(NoBackoff(), 0),
        )  # fmt: skip

    async def get(self, key: str, now: float) -> bytes | None:
        value = await self.redis.get(self.prefix + key)
        return value if isinstance(value, bytes) else None

    async def put(self, key: str, value: bytes, expires: float, now: float) -> None:
        await self.redis.set(self.prefix + key, value, px=max(1, math.ceil((expires - now) * 1000)))

    async def close(self) -> None:
        await self.redis.aclose()


_GET = "SELECT value FROM response_cache WHERE key = ? AND expires_at > ?"
_PUT = (
    "INSERT INTO response_cache (key, value, expires_at) VALUES (?, ?, ?)"
    " ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at"
)
_PRUNE = (  # bounded: a write never pays for a day of expired rows at once
    "DELETE FROM response_cache WHERE key IN"
    " (SELECT key FROM response_cache WHERE expires_at <= ? LIMIT 500)"
)


def _dollars(sql: str) -> str:
    """`?` placeholders as PostgreSQL's `$1, $2, ...` (these statements quote no `?`)."""
    parts = sql.split("?")
    return parts[0] + "".join(f"${i}{part}" for i, part in enumerate(parts[1:], 1))


class SqlBackend:
    """`response_cache` on `storage.url`: opened (and migrated) on first use."""

    def __init__(self, url: str) -> None:
        where = parse_store_url(url, what="response cache")
        self._db: _SQLite | _Postgres
        if isinstance(where, SQLiteURL):
            self._db = _SQLite(where.path)
            self.where = f"the store (SQLite {where.path})"
        else:
            self._db = _Postgres(where.dsn, schema=where.schema, min_size=1, max_size=4)
            self.where = f"the store (PostgreSQL schema {where.schema})"
        self._opened = False
        self._opening = asyncio.Lock()
        self._prune_at = 0.0

    async def _open(self) -> None:
        async with self._opening:  # two first requests at once open one connection
            if not self._opened:
                await self._db.open()
                self._opened = True

    async def get(self, key: str, now: float) -> bytes | None:
        if not self._opened:
            await self._open()
        return await self._db.get(key, now)

    async def put(self, key: str, value: bytes, expires: float, now: float) -> None:
        if not self._opened:
            await self._open()
        prune = now >= self._prune_at
        if prune:
            self._prune_at = now + _PRUNE_EVERY
        await self._db.put(key, value, expires, now if prune else None)

    async def close(self) -> None:
        await self._db.close()


class _SQLite(SQLiteConnection):
    what = "the response cache"

    async def open(self) -> None:
        await super().open()
        # Another process's write lock: wait a moment, not the store's 10 s, then go without.
        await self._db.execute_fetchall(f"PRAGMA busy_timeout = {_BUSY_MS}")
        # No fsync per write (this connection only): an entry lost to a power cut is a miss,
        # and WAL mode stays consistent without it. Saves ~0.3 ms a miss here.
        await self._db.execute_fetchall("PRAGMA synchronous = NORMAL")

    async def get(self, key: str, now: float) -> bytes | None:
        async with self._lock:
            rows = list(await self._db.execute_fetchall(_GET, (key, now)))
        return bytes(rows[0][0]) if rows else None

    async def put(self, key: str, value: bytes, expires: float, prune: float | None) -> None:
        async with self._lock:
            await self._db.execute_fetchall(_PUT, (key, value, expires))
            if prune is not None:
                await self._db.execute_fetchall(_PRUNE, (prune,))


class _Postgres(PostgresPool):
    what = "the response cache"

    async def get(self, key: str, now: float) -> bytes | None:
        row = await self._db.fetchrow(_dollars(_GET), key, now)
        return bytes(row[0]) if row is not None else None

    async def put(self, key: str, value: bytes, expires: float, prune: float | None) -> None:
        async with self._db.acquire() as conn:
            await conn.execute(_dollars(_PUT), key, value, expires)
            if prune is not None:
                await conn.execute(_dollars(_PRUNE), prune)


class CacheStore:
    """A backend under the outage policy; one per process, for every config it serves."""

    def __init__(
        self, backend: CacheBackend, *, stats: Stats | None = None, clock: Clock = time.time,
        timeout: float = 1.0, retry_seconds: float = 1.0,
    ) -> None:  # fmt: skip
        self.backend = backend
        self.stats = stats
        self.clock = clock
        self.timeout = timeout
        self.retry_seconds = retry_seconds
        self.ok = True
        self._down_since = 0.0
        self._retry_at = 0.0

    def usable(self) -> bool:
        """Whether to ask the backend now: while it works, then once per retry_seconds."""
        if self.ok:
            return True
        now = self.clock()
        if now < self._retry_at:
            return False
        self._retry_at = now + self.retry_seconds
        return True

    async def get(self, key: str) -> bytes | None:
        if not self.usable():
            raise CacheDown(self.backend.where)
        try:
            async with asyncio.timeout(self.timeout):
                value = await self.backend.get(key, self.clock())
        except Exception as e:
            raise self._failed(e) from None
        self._succeeded()
        return value

    async def put(self, key: str, value: bytes, expires: float) -> None:
        if not self.usable():
            raise CacheDown(self.backend.where)
        try:
            async with asyncio.timeout(self.timeout):
                await self.backend.put(key, value, expires, self.clock())
        except Exception as e:
            raise self._failed(e) from None
        self._succeeded()

    async def close(self) -> None:
        try:
            await self.backend.close()
        except Exception as e:  # closing at exit: nothing is lost, say why and go on
            log.warning("closing the response cache (%s) failed: %s", self.backend.where, e)

    def _failed(self, error: Exception) -> CacheDown:
        if self.stats is not None:
            self.stats.record_traffic("cache", "errors")
        why = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        self._retry_at = self.clock() + self.retry_seconds
        if self.ok:
            self.ok, self._down_since = False, time.monotonic()
            log.error("CACHE DOWN: the response cache in %s failed (%s): answers are served "
                      "without it until it is back", self.backend.where, why)  # fmt: skip
        return CacheDown(why)

    def _succeeded(self) -> None:
        if not self.ok:
            self.ok = True
            log.warning("CACHE BACK: the response cache in %s answers again after %.1f s",
                        self.backend.where, time.monotonic() - self._down_since)  # fmt: skip
