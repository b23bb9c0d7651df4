"""429 cooldowns kept in Redis (SPEC GW-19): the twin of `Cooldowns` for many replicas.

One ZSET, `{prefix}cd`: member = "provider/model", score = the time its cooldown ends. `cool` is
one Lua script so two replicas' 429s racing each other keep the longer rest, as in-process;
`remaining` is one ZSCORE. Time is the injected clock's (wall clock by default). Ended cooldowns
are swept by the next `cool`, and the key expires when its last cooldown has ended.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

from nerve.clock import Clock

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["RedisCooldowns"]

_COOL = """
local function f(x) return string.format('%.17g', x) end
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
local current = tonumber(redis.call('ZSCORE', KEYS[1], ARGV[3]) or ARGV[1])
local ends = math.max(current, now + tonumber(ARGV[2]))
if ends > now then
  redis.call('ZADD', KEYS[1], f(ends), ARGV[3])
  local ttl = math.ceil((ends - now) * 1000) + 1000
  if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
end
return f(ends - now)
"""


class RedisCooldowns:
    """Cooldowns in Redis (a client with decode_responses=True); the methods of `Cooldowns`."""

    def __init__(
        self,
        redis: Redis,
        *,
        default_seconds: float = 30,
        max_seconds: float = 3600,
        prefix: str = "nerve:",
        clock: Clock = time.time,
    ) -> None:
        if not 0 <= default_seconds <= max_seconds:
            raise ValueError("need 0 <= default_seconds <= max_seconds")
        self.redis = redis
        self.default_seconds = default_seconds
        self.max_seconds = max_seconds
        self._clock = clock
        self.zset = f"{prefix}cd"  # the breakers' gate script reads it too
        self._cool = redis.register_script(_COOL)

    async def cool(self, key: str, seconds: float | None) -> float:
        """Rest `key` for `seconds` (None: the default), clamped to [0, max_seconds]; a running
        longer cooldown is kept. Returns the seconds applied."""
        wanted = self.default_seconds if seconds is None or math.isnan(seconds) else seconds
        wanted = min(max(wanted, 0.0), self.max_seconds)
        args = [repr(self._clock()), repr(wanted), key]
        return float(await self._cool(keys=[self.zset], args=args))

    async def remaining(self, key: str) -> float:
        ends: float | None = await self.redis.zscore(self.zset, key)
        return 0.0 if ends is None else max(0.0, ends - self._clock())

    async def view(self) -> dict[str, float]:
        """Seconds remaining, for the keys cooling now."""
        now = self._clock()
        rows: list[Any] = await self.redis.zrangebyscore(
            self.zset, f"({now!r}", "+inf", withscores=True
        )
        return {str(key): round(float(ends) - now, 3) for key, ends in rows}
