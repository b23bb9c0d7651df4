"""Per-client rate limits kept in Redis (SPEC GW-19): the twin of `RateLimiter` for many replicas.

Same three limits, same semantics (see ratelimit.py): a refused request consumes nothing, the
reason named is the limit that clears last, retry_after is when the request would pass. Each
`acquire` is one Lua script (EVALSHA), so the check and the update are atomic across replicas:

    {prefix}rl:{client}:w   ZSET  the sliding window log: one member per admission, scored by time
    {prefix}rl:{client}:b   HASH  the token bucket: tokens, refilled at
    {prefix}rl:{client}:c   ZSET  in-flight leases scored by acquire time

A lease is the token `acquire` returns and `release` hands back. A replica that dies holding
leases cannot leak them: leases older than `lease_seconds` are dropped on the next acquire. Time
is the injected clock's (wall clock by default: replicas share no monotonic clock), passed to the
script, so tests drive it with a ManualClock. Every key gets a PEXPIRE equal to the time after
which it holds nothing a fresh key would not, so idle clients disappear by themselves.
"""

from __future__ import annotations

import itertools
import math
import time
import uuid
from typing import TYPE_CHECKING, Any

from nerve.clock import Clock
from nerve.errors import RateLimited
from nerve.gateway.resilience.ratelimit import rate_options
from nerve.gateway.resilience.redis_lua import RATE_SCRIPT

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from nerve.config import RateConfig

__all__ = ["RedisRateLimiter"]

_ACQUIRE = RATE_SCRIPT  # KEYS: window, bucket, leases; ARGV: see redis_lua.py


def _ttl_ms(seconds: float) -> int:
    return math.ceil(seconds * 1000) + 1000  # a second of slack for clock skew between replicas


class RedisRateLimiter:
    """`acquire(client) -> lease` / `release(client, lease)` against Redis (decode_responses)."""

    def __init__(
        self,
        redis: Redis,
        *,
        window_requests: int,
        window_seconds: float,
        burst: int,
        refill_per_second: float,
        max_concurrent: int,
        prefix: str = "nerve:",
        clock: Clock = time.time,
        lease_seconds: float = 600,
    ) -> None:
        if min(window_requests, burst, max_concurrent) < 1:
            raise ValueError("window_requests, burst, max_concurrent must be >= 1")
        if min(window_seconds, refill_per_second, lease_seconds) <= 0:
            raise ValueError("window_seconds, refill_per_second and lease_seconds must be > 0")
        self.redis = redis
        self.window_requests = window_requests
        self.window_seconds = window_seconds
        self.burst = burst
        self.refill_per_second = refill_per_second
        self.max_concurrent = max_concurrent
        self.lease_seconds = lease_seconds
        self.prefix = prefix
        self._clock = clock
        self._script = redis.register_script(_ACQUIRE)
        limits = (window_requests, window_seconds, burst, refill_per_second, max_concurrent)
        self._limits = [*map(repr, limits), repr(lease_seconds)]
        spans = (window_seconds, burst / refill_per_second, lease_seconds)
        self._ttls = [str(_ttl_ms(s)) for s in spans]
        self._ids = itertools.count()
        self._me = uuid.uuid4().hex[:12]  # lease ids: unique across replicas, cheap to make

    @classmethod
    def from_config(
        cls, cfg: RateConfig, redis: Redis, *, prefix: str = "nerve:", clock: Clock = time.time,
        lease_seconds: float = 600,
    ) -> RedisRateLimiter:  # fmt: skip
        return cls(
            redis, **rate_options(cfg), prefix=prefix, clock=clock, lease_seconds=lease_seconds
        )

    def keys(self, client: str) -> list[str]:
        base = f"{self.prefix}rl:{{{client}}}:"  # {client}: one hash slot on a Redis Cluster
        return [base + "w", base + "b", base + "c"]

    def call(self, client: str) -> tuple[list[str], list[str], str]:
        """KEYS, ARGV and lease of one acquire (`rate_check`/`rate_commit`, redis_lua.py)."""
        lease = f"{self._me}:{next(self._ids)}"
        return self.keys(client), [repr(self._clock()), *self._limits, lease, *self._ttls], lease

    @staticmethod
    def refusal(reply: list[Any]) -> RateLimited:
        """What a refused `rate_check` reply {0, reason, retry_after} means."""
        return RateLimited(str(reply[1]), float(reply[2]))

    async def acquire(self, client: str) -> str:
        """Admit one request of `client` and return its lease, or raise RateLimited."""
        keys, args, lease = self.call(client)
        result = await self._script(keys=keys, args=args)
        if result[0] != 1:
            raise self.refusal(result)
        return lease

    async def release(self, client: str, lease: str) -> None:
        """End one admitted request. Releasing twice, or a lease already dropped, is harmless."""
        await self.redis.zrem(self.keys(client)[2], lease)

    async def in_flight(self, client: str) -> int:
        """Leases of `client` held now (stale ones excluded)."""
        since = repr(self._clock() - self.lease_seconds)
        return int(await self.redis.zcount(self.keys(client)[2], f"({since}", "+inf"))

    def limits(self) -> dict[str, Any]:
        return {
            "window_requests": self.window_requests,
            "window_seconds": self.window_seconds,
            "burst": self.burst,
            "refill_per_second": self.refill_per_second,
            "max_concurrent": self.max_concurrent,
        }
