"""Circuit breakers kept in Redis (SPEC GW-19): the twin of `Breakers` for many replicas.

The same seam (`BreakersSeam`, seams.py) and the same state machine as breaker.py (closed →
open after N consecutive failures → half-open after the timer → one probe at a time, presumed
lost after `probe_timeout` → closed after `successes_to_close`; a late success while open does
not close, a late failure while open does not extend), so a breaker tripped through one replica
is open on all of them. Every transition is one Lua script, atomic across replicas:

    {prefix}br:{key}      HASH  state, failures, successes, opened_at, probe_since
    {prefix}br:index      SET   keys with a story, for `view()`

A key back in the pristine state (closed, no failures) is deleted. Time is the injected clock's
(wall clock by default), passed to the scripts. Keys expire after `idle_seconds` without a write.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

from nerve.clock import Clock
from nerve.gateway.resilience.breaker import breaker_options, configure_breaker
from nerve.gateway.resilience.redis_cooldown import RedisCooldowns
from nerve.gateway.resilience.redis_lua import GATE_LUA
from nerve.gateway.resilience.seams import BreakerState

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from nerve.config import BreakerConfig
    from nerve.gateway.resilience.seams import CooldownsSeam

__all__ = ["RedisBreakers"]

_OPEN = """
local function open()
  redis.call('HSET', KEYS[1], 'state', 'open', 'opened_at', ARGV[1], 'successes', '0')
  redis.call('HDEL', KEYS[1], 'probe_since')
end
"""
_ALLOW = GATE_LUA + "return breaker_admit(KEYS[1], ARGV)"
# The cooldown ZSET (redis_cooldown.py) and the breaker in one round trip: "c<seconds>" while
# the target rests after a 429, else breaker_admit's 0 (refused), 1 (admitted) or 2 (pristine).
_GATE = GATE_LUA + "return breaker_gate(KEYS[1], KEYS[2], ARGV)"
_SUCCESS = """
local b = redis.call('HMGET', KEYS[1], 'state', 'successes')
if b[1] == 'half_open' then
  local successes = tonumber(b[2] or '0') + 1
  if successes < tonumber(ARGV[1]) then
    redis.call('HSET', KEYS[1], 'successes', tostring(successes))
    redis.call('HDEL', KEYS[1], 'probe_since')
    return 0
  end
elseif b[1] ~= 'closed' or ARGV[3] == '1' then
  return 0  -- absent: pristine; open: a late answer; closed, a probe: not the calls' failures
end
redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[2])
return 1
"""
_FAILURE = (
    _OPEN
    + """
local state = redis.call('HGET', KEYS[1], 'state')
if not state then
  redis.call('HSET', KEYS[1], 'state', 'closed', 'failures', '0', 'successes', '0')
  redis.call('SADD', KEYS[2], ARGV[3])
  state = 'closed'
end
if state == 'closed' then
  if redis.call('HINCRBY', KEYS[1], 'failures', 1) >= tonumber(ARGV[2]) then open() end
elseif state == 'half_open' then
  open()
end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return 0
"""
)
_RELEASE = """
if redis.call('HGET', KEYS[1], 'state') == 'half_open' then
  redis.call('HDEL', KEYS[1], 'probe_since')
end
return 0
"""


class RedisBreakers:
    """Breakers in Redis (a client with decode_responses=True); the methods of `Breakers`."""

    def __init__(
        self,
        redis: Redis,
        *,
        failures: int = 3,
        half_open_after: float = 60,
        successes_to_close: int = 1,
        probe_timeout: float | None = None,
        prefix: str = "nerve:",
        clock: Clock = time.time,
        idle_seconds: float = 86_400,
    ) -> None:
        if failures < 1 or successes_to_close < 1 or half_open_after <= 0:
            raise ValueError("failures and successes_to_close must be >= 1, half_open_after > 0")
        self.redis = redis
        self.failures = failures
        self.half_open_after = half_open_after
        self.successes_to_close = successes_to_close
        self.probe_timeout = half_open_after if probe_timeout is None else probe_timeout
        self.prefix = prefix
        self.idle_seconds = idle_seconds
        self._clock = clock
        self._index = f"{prefix}br:index"
        self._allow = redis.register_script(_ALLOW)
        self._gate = redis.register_script(_GATE)
        self._success = redis.register_script(_SUCCESS)
        self._failure = redis.register_script(_FAILURE)
        self._release = redis.register_script(_RELEASE)

    @classmethod
    def from_config(
        cls, cfg: BreakerConfig, redis: Redis, *, prefix: str = "nerve:", clock: Clock = time.time
    ) -> RedisBreakers:
        return cls(redis, **breaker_options(cfg), prefix=prefix, clock=clock)

    def configure(self, cfg: BreakerConfig) -> None:
        """New thresholds from a reloaded config; the state in Redis is kept."""
        configure_breaker(self, cfg)

    @property
    def _ttl(self) -> str:
        seconds = max(self.idle_seconds, self.half_open_after + self.probe_timeout)
        return str(math.ceil(seconds * 1000))

    def _key(self, key: str) -> str:
        return f"{self.prefix}br:{key}"

    async def allow(self, key: str) -> bool:
        args = [repr(self._clock()), repr(self.half_open_after), repr(self.probe_timeout),
                self._ttl]  # fmt: skip
        return bool(await self._allow(keys=[self._key(key)], args=args))

    def gate_call(self, key: str, cooldowns: RedisCooldowns) -> tuple[list[str], list[str]]:
        """KEYS and ARGV of one `breaker_gate` (redis_lua.py)."""
        args = [repr(self._clock()), repr(self.half_open_after), repr(self.probe_timeout),
                self._ttl, key]  # fmt: skip
        return [self._key(key), cooldowns.zset], args

    @staticmethod
    def verdict(reply: Any) -> tuple[float, bool, bool]:
        """(cooling seconds, admitted, pristine) from a `breaker_gate` reply."""
        verdict = str(reply)
        if verdict.startswith("c"):
            return float(verdict[1:]), False, False
        return 0.0, verdict != "0", verdict == "2"

    async def gate(self, key: str, cooldowns: CooldownsSeam) -> tuple[float, bool]:
        """`Breakers.gate`: one script when the cooldowns are in Redis too, else two questions."""
        if isinstance(cooldowns, RedisCooldowns):
            cooling, admitted, _ = await self.gate_verdict(key, cooldowns)
            return cooling, admitted
        cooling = await cooldowns.remaining(key)
        return (cooling, False) if cooling > 0 else (0.0, await self.allow(key))

    async def gate_verdict(self, key: str, cooldowns: RedisCooldowns) -> tuple[float, bool, bool]:
        """`gate` in one script, and whether `key` has no breaker story: (cooling, admitted,
        pristine)."""
        keys, args = self.gate_call(key, cooldowns)
        return self.verdict(await self._gate(keys=keys, args=args))

    async def record_success(self, key: str, *, probe: bool = False) -> None:
        args: list[str | int] = [self.successes_to_close, key, "1" if probe else "0"]
        await self._success(keys=[self._key(key), self._index], args=args)

    async def record_failure(self, key: str) -> None:
        args: list[str | int] = [repr(self._clock()), self.failures, key, self._ttl]
        await self._failure(keys=[self._key(key), self._index], args=args)

    async def release(self, key: str) -> None:
        await self._release(keys=[self._key(key)])

    async def state(self, key: str) -> BreakerState:
        """The state as `allow()` would see it: an open breaker past its timer reads half-open."""
        fields: Any = await self.redis.hmget(self._key(key), ["state", "opened_at"])
        return self._state(fields[0], fields[1], self._clock())

    async def view(self) -> dict[str, dict[str, Any]]:
        """Every key not in the pristine closed state, shaped like `Breakers.snapshot()`."""
        members: Any = await self.redis.smembers(self._index)
        keys: list[str] = sorted(members)
        async with self.redis.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.hgetall(self._key(key))
            rows: list[dict[str, str]] = await pipe.execute()
        now, out = self._clock(), dict[str, dict[str, Any]]()
        for key, row in zip(keys, rows, strict=True):
            if not row:  # expired or closed since the index was read
                continue
            state = row.get("state", "closed")
            opened_at = float(row.get("opened_at") or 0)
            probe = row.get("probe_since")
            out[key] = {
                "state": self._state(state, row.get("opened_at"), now),
                "consecutive_failures": int(row.get("failures") or 0),
                "opened_at_ago_s": round(now - opened_at, 3) if state != "closed" else None,
                "half_open_in_s": (
                    round(max(0.0, opened_at + self.half_open_after - now), 3)
                    if state == "open"
                    else None
                ),
                "probe_successes": int(row.get("successes") or 0),
                "probe_in_flight": probe is not None and now - float(probe) < self.probe_timeout,
            }
        return out

    def _state(self, state: str | None, opened_at: str | None, now: float) -> BreakerState:
        if state == "open":
            if now - float(opened_at or 0) >= self.half_open_after:
                return "half_open"
            return "open"
        return "half_open" if state == "half_open" else "closed"
