"""The admin login throttle in Redis (AD-2 with GW-19): one count for every worker and replica.

Same rules as `LoginThrottle` (5 failures a minute → 429, 10 → a 30-minute ban, an attempt
counts as failed until forgiven), as one Lua script per attempt:

    {prefix}login:{client}:f     ZSET  failed attempts, scored by time
    {prefix}login:{client}:ban   STRING  when the ban ends

While Redis is unavailable the in-process counts of the parent class apply (logged by
SharedState); they never admit more than one process would.
"""

from __future__ import annotations

import uuid

from nerve.admin.throttle import LoginBanned, LoginThrottle, LoginThrottled
from nerve.gateway.resilience.shared import MISS, SharedState

__all__ = ["SharedLoginThrottle"]

_ATTEMPT = """
local now = tonumber(ARGV[1])
local ban_ms = math.ceil(tonumber(ARGV[4]) * 1000)
local ban = tonumber(redis.call('GET', KEYS[2]) or '0')
if ban > now then return {'banned', tostring(ban - now)} end
if ban > 0 then redis.call('DEL', KEYS[1], KEYS[2]) end  -- the ban is over: a clean slate
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[4]))
local recent = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. (now - 60), '+inf', 'WITHSCORES')
if #recent / 2 >= tonumber(ARGV[2]) then
  return {'throttled', tostring(tonumber(recent[2]) + 60 - now)}
end
redis.call('ZADD', KEYS[1], now, ARGV[5])
redis.call('PEXPIRE', KEYS[1], ban_ms)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  redis.call('SET', KEYS[2], tostring(now + tonumber(ARGV[4])), 'PX', ban_ms)
end
return {'ok', '0'}
"""


class SharedLoginThrottle(LoginThrottle):
    def __init__(self, shared: SharedState, **limits: float) -> None:
        super().__init__(shared.clock, **limits)  # type: ignore[arg-type]
        self.shared = shared
        self._attempt = shared.redis.register_script(_ATTEMPT)

    def _keys(self, client: str) -> list[str]:
        base = f"{self.shared.prefix}login:{client}"
        return [f"{base}:f", f"{base}:ban"]

    async def attempt(self, client: str) -> None:
        args: list[str | int | float] = [repr(self.clock()), self.per_minute, self.ban_after,
                                         self.ban_seconds, uuid.uuid4().hex]  # fmt: skip
        verdict = await self.shared.run(lambda: self._attempt(keys=self._keys(client), args=args))
        if verdict is MISS:
            await super().attempt(client)
            return
        kind, wait = verdict
        if kind == "banned":
            raise LoginBanned(float(wait))
        if kind == "throttled":
            raise LoginThrottled(float(wait))

    async def succeeded(self, client: str) -> None:
        await super().succeeded(client)
        await self.shared.run(lambda: self.shared.redis.delete(*self._keys(client)))
