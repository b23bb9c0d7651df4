"""The learning router's statistics in Redis (SPEC GW-12, GW-19): one learner for all replicas.

    {prefix}learn:r:<route>   HASH  n: the route's calls; "<target>\\n<field>": ok, fail (discounted
                                    as of call `at`), at, calls, errors, lat, cost (EWMAs)
    {prefix}learn:d:<route>   LIST  the route's last WINDOW decisions: the first candidate's key,
                                    "*"-prefixed when it was an exploration
    {prefix}learn:recent      LIST  the last RECENT outcomes, JSON, oldest first
    {prefix}learn:routes      SET   the routes with state, for a reset of all

`push` is ONE transaction: a Lua script applies a replica's Batch (batch.py) to each
route it touched and returns every asked route's hash, then the decisions and outcomes since the
last push are appended (and, for /evolution, the lists read). Discounting is by the route's call
count `n` in Redis: an arm not called is forgotten lazily, `ok · forget^(n − at)`, when it is next
written or read, so the script touches only the arms of the batch and its cost does not grow
with the outcomes in it (about 45 µs of Redis time for 3 routes x 3 candidates; the lists
appended are capped at WINDOW and RECENT). Nothing expires: what was learnt lasts until a reset.
Every replica is expected to run the same `half_life_calls`: the factors are the pusher's.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nerve.gateway.learning.batch import Batch

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["ArmRow", "Pulled", "RedisLearning"]

_PUSH = """
local function f(x) return string.format('%.17g', x) end
local forget = tonumber(ARGV[1])
local i, out = 2, {}
for r = 2, #KEYS do
  local key, name, k, arms = KEYS[r], ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
  i = i + 3
  if arms > 0 then
    local n0 = tonumber(redis.call('HGET', key, 'n') or '0')
    local n1 = n0 + k
    redis.call('HSET', key, 'n', f(n1))
    for _ = 1, arms do
      local t = ARGV[i] .. '\\n'
      local old = redis.call('HMGET', key, t..'ok', t..'fail', t..'at', t..'lat', t..'cost')
      local a = tonumber(ARGV[i + 1]) * forget ^ (n0 - tonumber(old[3] or n0))
      local ok = a * tonumber(old[1] or '0') + tonumber(ARGV[i + 2])
      local fail = a * tonumber(old[2] or '0') + tonumber(ARGV[i + 3])
      redis.call('HSET', key, t .. 'ok', f(ok), t .. 'fail', f(fail), t .. 'at', f(n1))
      redis.call('HINCRBY', key, t .. 'calls', ARGV[i + 4])
      redis.call('HINCRBY', key, t .. 'errors', ARGV[i + 5])
      for j, field in ipairs({'lat', 'cost'}) do  -- x' = g x + e, or l0 when x is unknown
        local at, x = i + 3 + 3 * j, old[3 + j]
        if x then x = f(tonumber(ARGV[at]) * tonumber(x) + tonumber(ARGV[at + 1]))
        elseif ARGV[at + 2] ~= '' then x = ARGV[at + 2] end
        if x then redis.call('HSET', key, t .. field, x) end
      end
      i = i + 12
    end
    redis.call('SADD', KEYS[1], name)
  end
  out[#out + 1] = redis.call('HGETALL', key)
end
return out
"""


@dataclass(frozen=True, slots=True)
class ArmRow:
    """One candidate's statistics in Redis, discounted to the route's latest call."""

    ok: float
    fail: float
    calls: int
    errors: int
    latency: float | None
    cost: float | None


@dataclass(frozen=True, slots=True)
class Pulled:
    arms: dict[str, dict[str, ArmRow]]  # route -> target -> row; a target never called is absent
    decisions: dict[str, list[str]]  # route -> decisions, oldest first (only when asked to read)
    recent: list[str]  # outcomes as JSON, oldest first (only when asked to read)


def _f(x: float | None) -> str:
    return "" if x is None else repr(x)


class RedisLearning:
    """The shared statistics (a client with decode_responses=True): push a batch, read, reset."""

    def __init__(self, redis: Redis, *, prefix: str, window: int, recent: int) -> None:
        self.redis = redis
        self.window = window
        self.recent = recent
        self._route = f"{prefix}learn:r:"
        self._decisions = f"{prefix}learn:d:"
        self._recent = f"{prefix}learn:recent"
        self._index = f"{prefix}learn:routes"
        self._push = redis.register_script(_PUSH)

    async def push(
        self,
        batch: Batch,
        routes: Collection[str],
        decisions: Mapping[str, Sequence[str]],
        recent: Sequence[str],
        *,
        read: bool = False,
    ) -> Pulled:
        """Apply `batch`, append the decisions and outcomes; every route in `routes` (and the
        batch) comes back as it is now, and with `read` the decision and outcome lists too."""
        names = list(routes) + [r for r in batch.routes if r not in routes]
        args: list[str | int] = [repr(batch.forget)]
        for name in names:
            rb = batch.routes.get(name)
            deltas = rb.arms if rb is not None else {}
            args += [name, rb.k if rb is not None else 0, len(deltas)]
            for target, d in deltas.items():
                lat, cost = d.latency, d.cost
                args += [target, repr(d.a), repr(d.ok), repr(d.fail), d.calls, d.errors,
                         repr(lat.g), repr(lat.e), _f(lat.l0),
                         repr(cost.g), repr(cost.e), _f(cost.l0)]  # fmt: skip
        keys = [self._index, *(self._route + n for n in names)]
        async with self.redis.pipeline(transaction=True) as pipe:
            await self._push(keys=keys, args=args, client=pipe)
            for name, decided in decisions.items():
                if decided:
                    pipe.rpush(self._decisions + name, *decided[-self.window :])
                    pipe.ltrim(self._decisions + name, -self.window, -1)
                    pipe.sadd(self._index, name)
            if recent:
                pipe.rpush(self._recent, *recent[-self.recent :])
                pipe.ltrim(self._recent, -self.recent, -1)
            if read:
                for name in names:
                    pipe.lrange(self._decisions + name, 0, -1)
                pipe.lrange(self._recent, 0, -1)
            results: list[Any] = await pipe.execute()
        arms = {
            n: self._rows(flat, batch.forget) for n, flat in zip(names, results[0], strict=True)
        }
        if not read:
            return Pulled(arms, {}, [])
        lists = results[-len(names) - 1 :]
        return Pulled(arms, dict(zip(names, lists[:-1], strict=True)), lists[-1])

    @staticmethod
    def _rows(flat: list[str], forget: float) -> dict[str, ArmRow]:
        fields = dict(zip(flat[::2], flat[1::2], strict=True))
        n = float(fields.pop("n", 0))
        by_target: dict[str, dict[str, str]] = {}
        for name, value in fields.items():
            target, _, field = name.rpartition("\n")
            by_target.setdefault(target, {})[field] = value
        rows = {}
        for target, v in by_target.items():
            keep = forget ** (n - float(v.get("at", n)))
            lat, cost = v.get("lat"), v.get("cost")
            rows[target] = ArmRow(
                float(v.get("ok", 0)) * keep, float(v.get("fail", 0)) * keep,
                int(v.get("calls", 0)), int(v.get("errors", 0)),
                None if lat is None else float(lat), None if cost is None else float(cost),
            )  # fmt: skip
        return rows

    async def reset(self, routes: Collection[str], *, everything: bool = False) -> None:
        """Forget the statistics and decisions of `routes`; `everything`: of every route that
        has any, and the recent outcomes."""
        names = set(routes)
        if everything:
            members: Any = await self.redis.smembers(self._index)
            names |= set(members)
        keys = [self._route + n for n in names] + [self._decisions + n for n in names]
        async with self.redis.pipeline(transaction=True) as pipe:
            if keys:
                pipe.delete(*keys)
            if everything:
                pipe.delete(self._recent, self._index)
            elif names:
                pipe.srem(self._index, *names)
            await pipe.execute()
