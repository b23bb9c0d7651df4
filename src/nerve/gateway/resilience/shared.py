"""Gateway state shared by replicas through Redis (SPEC GW-19): connection, heartbeat, policy.

Without `redis.url` nothing here runs: `build_resilience` (gateway/state.py) hands out the
in-process RateLimiter, Breakers and Cooldowns as they are. With it, it hands out the Shared*
classes (fallback.py): each asks its Redis twin (redis_*.py) and keeps an in-process object as
the fallback. `SharedState` owns what they share:

- the client (one pool; `timeout_seconds` per command, no client-side retries),
- a heartbeat: `{prefix}replica:<id>` with a 10 s TTL, refreshed every 2 s, and the count of live
  replicas (`{prefix}replicas`, a ZSET scored by last beat),
- the stats flush: the local Stats is a delta buffer pushed to Redis every second
  (gateway/shared_stats.py); /stats, /metrics and /cost-performance read every replica's sum; the
  learning router's statistics ride the same tick (`on_flush`, gateway/learning/shared.py),
- the policy when Redis fails (`redis.on_error`): `local`, the in-process twins take over with
  the rate limits divided by the replicas last seen (N replicas still admit about one limit);
  `closed`, chat and fan-out requests get 503 `shared_state_unavailable`.

An outage is logged when it starts and when it ends and shows on /health. While degraded, Redis
is tried again at most once per `retry_seconds`, by whichever call comes first.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import math
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from nerve.clock import Clock
from nerve.errors import ConfigError, SharedStateUnavailable
from nerve.gateway.shared_stats import RedisStats
from nerve.gateway.stats import Stats

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from nerve.config import RedisConfig

__all__ = [
    "MISS",
    "SharedState",
    "SharedStateUnavailable",
    "redacted",
    "require_redis",
]

log = logging.getLogger("nerve.gateway")
T = TypeVar("T")
INSTALL_HINT = "pip install 'nerve[redis]'"


class _Miss(enum.Enum):
    MISS = "miss"


MISS = _Miss.MISS
"""What `SharedState.run` returns when Redis was not asked or did not answer."""


def require_redis() -> None:
    """Raise ConfigError naming the install command when the redis package is missing."""
    try:
        import redis.asyncio  # noqa: F401
    except ImportError:
        raise ConfigError(
            f"set, but the redis package that shares state through it is not installed: "
            f"{INSTALL_HINT}",
            path="redis.url",
        ) from None


def redacted(url: str) -> str:
    """The URL without its password, for logs and /health."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = (f"{parts.username}@" if parts.username else "") + host
    netloc += f":{parts.port}" if parts.port else ""
    return urlunsplit(parts._replace(netloc=netloc))


def connect(cfg: RedisConfig) -> Redis:
    require_redis()
    from redis.asyncio import Redis
    from redis.asyncio.retry import Retry
    from redis.backoff import NoBackoff

    assert cfg.url is not None
    return Redis.from_url(
        cfg.url,
        decode_responses=True,
        socket_timeout=cfg.timeout_seconds,
        socket_connect_timeout=cfg.timeout_seconds,
        retry=Retry(NoBackoff(), 0),  # the policy decides what a failure means, not the client
    )


class SharedState:
    """One process's link to the shared state: client, heartbeat, stats flush, failure policy."""

    def __init__(
        self,
        cfg: RedisConfig,
        *,
        clock: Clock = time.time,
        redis: Redis | None = None,
        stats: Stats | None = None,
        heartbeat_seconds: float = 2.0,
        replica_ttl: float = 10.0,
        flush_seconds: float = 1.0,
    ) -> None:
        require_redis()
        from redis.exceptions import RedisError

        self.cfg = cfg
        self.url = redacted(cfg.url or "")
        self.policy = cfg.on_error
        self.prefix = cfg.key_prefix
        self.clock = clock
        self.redis: Redis = redis if redis is not None else connect(cfg)
        self.errors: tuple[type[BaseException], ...] = (RedisError, OSError)
        self.id = uuid.uuid4().hex
        self.ok = True
        self.degraded_since: float | None = None
        self.last_error: str | None = None
        self.replicas = 1
        self.local_stats = stats if stats is not None else Stats(clock=clock)
        self.stats = RedisStats(self.redis, self.local_stats, prefix=self.prefix, clock=clock)
        self.heartbeat_seconds = heartbeat_seconds
        self.replica_ttl = replica_ttl
        self.flush_seconds = flush_seconds
        self._retry_at = 0.0
        self._after_beat: list[Callable[[], Awaitable[None]]] = []
        self._on_flush: list[Callable[[], Awaitable[None]]] = []
        self._tasks: list[asyncio.Task[None]] = []

    # --- the policy -----------------------------------------------------------------------

    def usable(self) -> bool:
        """Whether to ask Redis now: always while it works, then once per retry_seconds."""
        if self.ok:
            return True
        now = self.clock()
        if now < self._retry_at:
            return False
        self._retry_at = now + self.cfg.retry_seconds
        return True

    def failed(self, error: BaseException) -> None:
        self.last_error = f"{type(error).__name__}: {error}"
        self._retry_at = self.clock() + self.cfg.retry_seconds
        if self.ok:
            self.ok, self.degraded_since = False, time.time()
            fallback = (
                f"in-process state, rate limits divided by {self.replicas} replica(s)"
                if self.policy == "local"
                else "refusing chat and fan-out requests with 503"
            )
            log.error("SHARED STATE DOWN: Redis at %s failed (%s); policy %s: %s",
                      self.url, self.last_error, self.policy, fallback)  # fmt: skip

    def succeeded(self) -> None:
        if not self.ok:
            down = time.time() - (self.degraded_since or time.time())
            self.ok, self.degraded_since = True, None
            log.warning("SHARED STATE BACK: Redis at %s answers again after %.1f s", self.url, down)

    async def run(self, op: Callable[[], Awaitable[T]]) -> T | _Miss:
        """`op()` against Redis under the policy: its result, or MISS (not asked, or failed)."""
        if not self.usable():
            return MISS
        try:
            result = await op()
        except self.errors as e:
            self.failed(e)
            return MISS
        self.succeeded()
        return result

    def unavailable(self) -> SharedStateUnavailable:
        return SharedStateUnavailable(
            f"the shared state (Redis at {self.url}) is unavailable and redis.on_error is "
            f"'closed': requests are refused until it is back ({self.last_error})",
            retry_after=self.cfg.retry_seconds,
        )

    # --- lifetime -------------------------------------------------------------------------

    def after_beat(self, hook: Callable[[], Awaitable[None]]) -> None:
        """Run `hook` after each heartbeat that reached Redis (catch-up work, off the hot path)."""
        self._after_beat.append(hook)

    def on_flush(self, hook: Callable[[], Awaitable[None]]) -> None:
        """Run `hook` on each flush tick after the stats (it goes through `run` itself)."""
        self._on_flush.append(hook)

    async def open(self) -> None:
        await self.beat()
        self._tasks = [
            asyncio.create_task(self._every(self.heartbeat_seconds, self.beat), name="heartbeat"),
            asyncio.create_task(self._every(self.flush_seconds, self.flush), name="stats flush"),
        ]

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self.ok:
            await self.flush()
            with contextlib.suppress(*self.errors):
                async with self.redis.pipeline(transaction=True) as pipe:
                    pipe.delete(f"{self.prefix}replica:{self.id}")
                    pipe.zrem(f"{self.prefix}replicas", self.id)
                    await pipe.execute()
        await self.redis.aclose()

    async def beat(self) -> None:
        """Register this replica and count the live ones; then the after-beat hooks."""
        count = await self.run(self._beat)
        if count is MISS:
            return
        self.replicas = max(1, count)
        for hook in self._after_beat:
            await hook()

    async def _beat(self) -> int:
        now, ttl = self.clock(), self.replica_ttl
        members = f"{self.prefix}replicas"
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.set(f"{self.prefix}replica:{self.id}", repr(now), px=math.ceil(ttl * 1000))
            pipe.zadd(members, {self.id: now})
            pipe.zremrangebyscore(members, "-inf", f"({now - ttl!r}")
            pipe.zcard(members)
            pipe.pexpire(members, math.ceil(ttl * 1000))
            results = await pipe.execute()
        return int(results[3])

    async def flush(self) -> None:
        await self.run(self.stats.flush)
        for hook in self._on_flush:
            await hook()

    async def _every(self, seconds: float, job: Callable[[], Awaitable[None]]) -> None:
        while True:
            await asyncio.sleep(seconds)
            try:
                await job()
            except Exception:  # a bug in one round must not stop the next
                log.exception("shared state: %s failed", getattr(job, "__name__", job))

    # --- views ----------------------------------------------------------------------------

    async def stats_view(self) -> Stats:
        """Every replica's stats from Redis; this process's unflushed ones while degraded."""
        merged = await self.run(self.stats.merged)
        return self.local_stats if merged is MISS else merged

    async def stats_reset(self) -> dict[str, Any]:
        previous = await self.run(self.stats.reset)
        if previous is MISS:
            return self.local_stats.reset()
        return previous.snapshot()

    def health(self) -> dict[str, Any]:
        return {
            "backend": "redis",
            "url": self.url,
            "ok": self.ok,
            "policy": self.policy,
            "replicas": self.replicas,
            "degraded_since": self.degraded_since,
            "last_error": self.last_error,
        }
