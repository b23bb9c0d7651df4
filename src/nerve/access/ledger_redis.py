"""`RedisLedger`: keys' spend and token windows in Redis (`redis.url`), shared by every replica.

Per key and window (`usd:<period start>`, `tpm:<minute start>`; `{key}` is a hash tag, so one
key's windows share a Redis Cluster slot):

    {prefix}ledger:{key}:usd:1767225600         HASH  used, held (dollars; tokens for tpm)
    {prefix}ledger:{key}:usd:1767225600:holds   ZSET  live holds "<hold id>:<amount>" by time

`reserve` is one script (RESERVE_LUA) over all the key's windows: it drops holds older than
`hold_seconds` (a replica that died between reserve and settle cannot keep them forever), then
holds the charge in every window only if it fits in each. `settle` is one script: a hold still
in its ZSET is removed, its amount released and the actual amount billed. A hold already
settled or in a window that expired is a no-op (settle twice is harmless), and a settle later
than `hold_seconds` after its reserve bills nothing: `hold_seconds` must exceed the longest
call (default 600 s: ten times the default upstream timeout). Keys expire
`hold_seconds` (+1 s) after their window ends, so a call straddling a boundary is billed to the
period it reserved in; windows of `total` budgets never expire. Time is the injected clock's,
passed to the scripts.

To fold the reservation into a larger admission script: prepend RESERVE_LUA, which defines the
Lua function `reserve_budget(keys, argv)`, and call it with the tables `RedisLedger.plan` gives
(`Reservation.keys`/`.args`), then hand its reply to `Reservation.outcome`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nerve.access.ledger import Charge, Hold, Spend
from nerve.access.ledger_windows import (
    Window,
    budget_window,
    hold_windows,
    new_hold,
    refusal,
    spend_of,
    windows,
)
from nerve.access.principal import Principal

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from nerve.clock import Clock

__all__ = ["RESERVE_LUA", "SETTLE_LUA", "RedisLedger", "Reservation"]

RESERVE_LUA = """
-- keys: per window its HASH (used, held) then its ZSET of holds; #keys / 2 windows.
-- argv: now, stale (holds scored at or before it are dropped), hold id,
--       then per window: limit, amount, ttl in ms (0: never expires).
-- Returns {1} when held in every window, or {0, window index, used, held} (nothing held).
local function reserve_budget(keys, argv)
  local function f(x) return string.format('%.17g', x) end
  local now, stale, id = argv[1], argv[2], argv[3]
  local held = {}
  for i = 1, #keys / 2 do
    local hash, holds = keys[2 * i - 1], keys[2 * i]
    local limit, amount = tonumber(argv[3 * i + 1]), tonumber(argv[3 * i + 2])
    local h = tonumber(redis.call('HGET', hash, 'held')) or 0
    local old = redis.call('ZRANGEBYSCORE', holds, '-inf', stale)
    if #old > 0 then
      for _, m in ipairs(old) do h = h - tonumber(string.match(m, ':([^:]*)$')) end
      redis.call('ZREMRANGEBYSCORE', holds, '-inf', stale)
      if h < 0 or redis.call('ZCARD', holds) == 0 then h = 0 end
      redis.call('HSET', hash, 'held', f(h))
    end
    local used = tonumber(redis.call('HGET', hash, 'used')) or 0
    if used + h + amount > limit + 1e-9 then return {0, i, f(used), f(h)} end
    held[i] = h
  end
  for i = 1, #keys / 2 do
    local hash, holds = keys[2 * i - 1], keys[2 * i]
    local amount, ttl = argv[3 * i + 2], tonumber(argv[3 * i + 3])
    redis.call('HSET', hash, 'held', f(held[i] + tonumber(amount)))
    redis.call('ZADD', holds, now, id .. ':' .. amount)
    if ttl > 0 then
      redis.call('PEXPIRE', hash, ttl)
      redis.call('PEXPIRE', holds, ttl)
    end
  end
  return {1}
end
"""

_RESERVE = RESERVE_LUA + "return reserve_budget(KEYS, ARGV)\n"

# keys: per window HASH, ZSET. argv: stale (as in reserve), then per window the hold's member,
# its amount, the actual amount. A stale hold not yet dropped is released but not billed.
SETTLE_LUA = """
local function settle_budget(keys, argv)
  local stale = tonumber(argv[1])
  for i = 1, #keys / 2 do
    local hash, holds, member = keys[2 * i - 1], keys[2 * i], argv[3 * i - 1]
    local at = tonumber(redis.call('ZSCORE', holds, member))
    if at and redis.call('EXISTS', hash) == 1 then
      redis.call('ZREM', holds, member)
      local h = (tonumber(redis.call('HGET', hash, 'held')) or 0) - tonumber(argv[3 * i])
      if h < 0 or redis.call('ZCARD', holds) == 0 then h = 0 end
      redis.call('HSET', hash, 'held', string.format('%.17g', h))
      if at > stale then redis.call('HINCRBYFLOAT', hash, 'used', argv[3 * i + 1]) end
    end
  end
  return 1
end
"""
_SETTLE = SETTLE_LUA + "return settle_budget(KEYS, ARGV)\n"


@dataclass(frozen=True, slots=True)
class Reservation:
    """One call of `reserve_budget`: its KEYS and ARGV, and how to read its reply."""

    keys: list[str]
    args: list[str]
    hold: Hold  # what `reserve` returns when the script admits
    principal: Principal
    windows: list[Window]
    now: float

    def outcome(self, reply: list[Any]) -> Hold:
        """The hold, or raise the refusal (RateLimited "tpm" / BudgetExceeded) `reply` says."""
        if int(reply[0]) == 1:
            return self.hold
        window = self.windows[int(reply[1]) - 1]
        raise refusal(self.principal, window, float(reply[2]), float(reply[3]), self.now)


class RedisLedger:
    """The `Ledger` on Redis (a redis.asyncio client, decode_responses)."""

    def __init__(
        self,
        redis: Redis,
        *,
        prefix: str = "nerve:",
        clock: Clock = time.time,
        hold_seconds: float = 600,
    ) -> None:
        if hold_seconds <= 0:
            raise ValueError("hold_seconds must be > 0")
        self.redis = redis
        self.prefix = prefix
        self.hold_seconds = hold_seconds
        self._clock = clock
        self._reserve = redis.register_script(_RESERVE)
        self._settle = redis.register_script(_SETTLE)

    def keys(self, key: str, window: Window) -> list[str]:
        base = f"{self.prefix}ledger:{{{key}}}:{window.name}"
        return [base, base + ":holds"]

    def plan(self, principal: Principal, charge: Charge) -> Reservation | None:
        """The script call that reserves `charge`; None when the key has no tpm nor budget."""
        now = self._clock()
        wanted = windows(principal, charge, now)
        if not wanted:
            return None
        hold = new_hold(principal, charge, wanted)
        keys: list[str] = []
        args = [repr(now), repr(now - self.hold_seconds), hold.id]
        for window in wanted:
            keys += self.keys(principal.name, window)
            expires = window.expires_at(self.hold_seconds)
            ttl = 0 if expires is None else max(1, round((expires - now) * 1000) + 1000)
            args += [repr(float(window.limit)), repr(window.amount), str(ttl)]
        return Reservation(keys, args, hold, principal, wanted, now)

    async def reserve(self, principal: Principal, charge: Charge) -> Hold:
        reservation = self.plan(principal, charge)
        if reservation is None:
            return Hold(principal.name, charge, None, None)
        reply = await self._reserve(keys=reservation.keys, args=reservation.args)
        return reservation.outcome(list(reply))

    def settle_call(self, hold: Hold, actual: Charge) -> tuple[list[str], list[str]] | None:
        """KEYS and ARGV of `settle_budget` (SETTLE_LUA) for `hold`; None: nothing to settle."""
        if not hold.id:
            return None
        keys: list[str] = []
        args = [repr(self._clock() - self.hold_seconds)]
        held = hold_windows(hold, hold.charge)
        for window, billed in zip(held, hold_windows(hold, actual), strict=True):
            keys += self.keys(hold.key, window)
            args += [f"{hold.id}:{window.amount!r}", repr(window.amount), repr(billed.amount)]
        return keys, args

    async def settle(self, hold: Hold, actual: Charge) -> None:
        call = self.settle_call(hold, actual)
        if call is not None:
            await self._settle(keys=call[0], args=call[1])

    async def spend(self, principals: list[Principal]) -> list[Spend]:
        now = self._clock()
        budgeted = [(p, w) for p in principals if (w := budget_window(p, now)) is not None]
        pipe = self.redis.pipeline(transaction=False)
        for principal, window in budgeted:
            hash_key, holds = self.keys(principal.name, window)
            pipe.hget(hash_key, "used")
            pipe.zrangebyscore(holds, f"({now - self.hold_seconds!r}", "+inf")
        replies = await pipe.execute() if budgeted else []
        found = []
        for i, (principal, window) in enumerate(budgeted):
            used, live = replies[2 * i], replies[2 * i + 1]
            held = sum(float(_text(m).rsplit(":", 1)[1]) for m in live)
            found.append(spend_of(principal, window, float(used or 0), held))
        return found


def _text(member: str | bytes) -> str:
    return member.decode() if isinstance(member, bytes) else member
