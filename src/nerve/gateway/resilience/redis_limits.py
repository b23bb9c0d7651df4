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

from nerve.errors import RateLimited
from nerve.gateway.resilience.clock import Clock
from nerve.gateway.resilience.ratelimit import rate_options

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from nerve.config import RateConfig

__all__ = ["RedisRateLimiter"]

_ACQUIRE = """
local function f(x) return string.format('%.17g', x) end
local now = tonumber(ARGV[1])
local window_requests, window_seconds = tonumber(ARGV[2]), tonumber(ARGV[3])
local burst, refill = tonumber(ARGV[4]), tonumber(ARGV[5])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', f(now - tonumber(ARGV[7])))
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[6]) then
  return {0, 'concurrent', '1'}
end
local bucket = redis.call('HMGET', KEYS[2], 'tokens', 'at')
local tokens, at = tonumber(bucket[1]), tonumber(bucket[2])
if tokens == nil or at == nil then tokens, at = burst, now end
tokens = math.min(burst, tokens + math.max(0, now - at) * refill)
local horizon = now - window_seconds
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', f(horizon))
local burst_wait, window_wait = 0, 0
if tokens < 1 - 1e-9 then burst_wait = (1 - tokens) / refill end
if redis.call('ZCARD', KEYS[1]) >= window_requests then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  window_wait = tonumber(oldest[2]) - horizon
end
if burst_wait > 0 or window_wait > 0 then
  local reason = 'burst'
  if window_wait >= burst_wait then reason = 'window' end
  return {0, reason, f(math.max(burst_wait, window_wait))}
end
redis.call('HSET', KEYS[2], 'tokens', f(math.max(0, tokens - 1)), 'at', ARGV[1])
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[8])
redis.call('ZADD', KEYS[3], ARGV[1], ARGV[8])
redis.call('PEXPIRE', KEYS[1], ARGV[9])
redis.call('PEXPIRE', KEYS[2], ARGV[10])
redis.call('PEXPIRE', KEYS[3], ARGV[11])
return {1}
"""


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
        self._ttls = [_ttl_ms(s) for s in spans]
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

    async def acquire(self, client: str) -> str:
        """Admit one request of `client` and return its lease, or raise RateLimited."""
        lease = f"{self._me}:{next(self._ids)}"
        args: list[Any] = [repr(self._clock()), *self._limits, lease, *self._ttls]
        result = await self._script(keys=self.keys(client), args=args)
        if result[0] != 1:
            raise RateLimited(str(result[1]), float(result[2]))
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
