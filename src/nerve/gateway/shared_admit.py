"""Admission in one Redis round trip when the gateway's state is shared (redis.url).

`KeyGate.admit` asks in turn: the server's limits, the key's own, the key's budget hold, and
(in `_walk`) the first candidate's breaker — four round trips with Redis. `SharedKeyGate` sends
them as one script, `ADMIT`, which checks every limit before it writes anything, so a refusal
anywhere takes nothing (the server's window is not spent by a call the key's budget refuses):

    KEYS  server limits (3) | key limits (0 or 3) | first gate (0 or 2) | budget windows (2 each)
    ARGV  four KEYS counts, four ARGV counts, then each section's arguments (redis_lua.py,
          ledger_redis.py)
    reply {0, "limit" | "key", reason, retry_after} | {0, "ledger", reserve reply}
          | {1, gate verdict ("" when not asked)}

What a call gives back afterwards (its leases, and its hold settled) is queued and sent in one
pipeline for every call that finished in the same turn of the event loop, so under load the
release side costs a fraction of a round trip per call. Whenever Redis is not usable (down,
or between retries), admission falls back to the step-by-step path of `KeyGate`, whose shared
twins then apply `redis.on_error`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from nerve.access.ledger_redis import RESERVE_LUA, RedisLedger, Reservation
from nerve.access.principal import Principal
from nerve.gateway.admission import KeyGate, Ticket, key_refusal
from nerve.gateway.core import Gate, Plan
from nerve.gateway.resilience.redis_limits import RedisRateLimiter
from nerve.gateway.resilience.redis_lua import GATE_LUA, RATE_LUA
from nerve.gateway.shared import MISS
from nerve.gateway.shared_twins import SharedBreakers, SharedCooldowns, SharedLimiter

if TYPE_CHECKING:
    from nerve.gateway.shared import SharedState

__all__ = ["ADMIT", "SharedKeyGate"]

log = logging.getLogger("nerve.gateway")

ADMIT = (
    RATE_LUA
    + GATE_LUA
    + RESERVE_LUA
    + """
local function slice(t, from, n)
  local out = {}
  for i = 1, n do out[i] = t[from + i - 1] end
  return out
end
local parts, ki, ai = {}, 1, 9
for s = 1, 4 do
  local nk, na = tonumber(ARGV[s]), tonumber(ARGV[s + 4])
  parts[s] = {slice(KEYS, ki, nk), slice(ARGV, ai, na)}
  ki, ai = ki + nk, ai + na
end
local server, key, gate, ledger = parts[1], parts[2], parts[3], parts[4]
local checked = rate_check(server[1], server[2])
if checked[1] == 0 then return {0, 'limit', checked[2], checked[3]} end
local own = nil
if #key[1] > 0 then
  own = rate_check(key[1], key[2])
  if own[1] == 0 then return {0, 'key', own[2], own[3]} end
end
if #ledger[1] > 0 then
  local held = reserve_budget(ledger[1], ledger[2])
  if held[1] ~= 1 then return {0, 'ledger', held} end
end
rate_commit(server[1], server[2], checked[2])
if own then rate_commit(key[1], key[2], own[2]) end
local verdict = ''
if #gate[1] > 0 then verdict = breaker_gate(gate[1][1], gate[1][2], gate[2]) end
return {1, verdict}
"""
)


class SharedKeyGate(KeyGate):
    """`KeyGate` whose admission is one script and whose leaving is batched (see above)."""

    def __init__(self, shared: SharedState, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.shared = shared
        self._admit = shared.redis.register_script(ADMIT)
        self._queue: list[tuple[SharedLimiter, str, str]] = []  # leases to give back
        self._flushing: asyncio.Future[None] | None = None

    async def admit(
        self, principal: Principal, body: Mapping[str, Any] | None = None,
        plan: Plan | None = None,
    ) -> Ticket:  # fmt: skip
        server = self.limiter
        if not isinstance(server, SharedLimiter) or not self.shared.usable():
            return await super().admit(principal, body, plan)
        ledger = self.ledger if isinstance(self.ledger, RedisLedger) else None
        if principal.metered and plan is not None and body is not None and ledger is None:
            return await super().admit(principal, body, plan)  # the budget is kept elsewhere
        keys: list[str] = []
        args: list[str] = []
        counts: list[int] = []
        ticket = Ticket(principal)

        def section(k: list[str], a: list[str]) -> None:
            keys.extend(k)
            args.extend(a)
            counts.append(len(k))
            counts.append(len(a))

        k, a, ticket.client_lease = server.redis.call(principal.client)
        section(k, a)
        own: SharedLimiter | None = None
        if principal.limited:
            limiter = self._limiter(principal)
            assert isinstance(limiter, SharedLimiter)
            own = limiter
            k, a, ticket.lease = own.redis.call(principal.client + ":own")
            section(k, a)
        else:
            section([], [])
        target = self._first(plan)
        breakers, cooldowns = self.resilience.breakers, self.resilience.cooldowns
        if target is not None and isinstance(breakers, SharedBreakers):
            assert isinstance(cooldowns, SharedCooldowns)
            section(*breakers.redis.gate_call(target, cooldowns.redis))
        else:
            target = None
            section([], [])
        reservation: Reservation | None = None
        if ledger is not None and principal.metered and plan is not None and body is not None:
            reservation = ledger.plan(principal, self.charge(body, plan))
        section(*(reservation.keys, reservation.args) if reservation else ([], []))
        # counts went in as (keys, args) pairs; the script wants four key counts, then four args.
        header = [str(n) for n in counts[0::2] + counts[1::2]]
        try:
            reply = await self._admit(keys=keys, args=header + args)
        except self.shared.errors as e:
            self.shared.failed(e)
            return await super().admit(principal, body, plan)
        self.shared.succeeded()
        if int(reply[0]) != 1:
            ticket.client_lease = ticket.lease = None  # the script took nothing
            if str(reply[1]) == "ledger" and reservation is not None:
                reservation.outcome(list(reply[2]))  # raises the budget's or tpm's refusal
            self._refuse(list(reply))
        if reservation is not None:
            ticket.hold = reservation.hold
        if target is not None:
            assert isinstance(breakers, SharedBreakers)
            cooling, admitted = breakers.take(target, breakers.redis.verdict(reply[1]))
            ticket.gate = Gate(target, cooling, admitted)
        return ticket

    async def _release(self, ticket: Ticket) -> None:
        """The leases back: Redis ones queued for the next pipeline, local ones right away."""
        principal, queued = ticket.principal, []
        for limiter, client, lease in (
            (self._limiter(principal), principal.client + ":own", ticket.lease),
            (self.limiter, principal.client, ticket.client_lease),
        ):
            if lease is None:
                continue
            if lease and isinstance(limiter, SharedLimiter):
                queued.append((limiter, client, lease))
            else:
                await limiter.release(client, lease)
        ticket.lease = ticket.client_lease = None
        if queued:
            await self._batched(queued)

    async def _batched(self, ops: list[tuple[SharedLimiter, str, str]]) -> None:
        self._queue.extend(ops)
        if self._flushing is None:
            loop = asyncio.get_running_loop()
            self._flushing = loop.create_future()
            loop.call_soon(lambda: asyncio.ensure_future(self._flush()))
        await asyncio.shield(self._flushing)

    async def _flush(self) -> None:
        done, self._flushing = self._flushing, None
        queue, self._queue = self._queue, []
        try:
            if await self.shared.run(lambda: self._zrem(queue)) is MISS:
                for limiter, client, lease in queue:  # each keeps what it cannot pay back
                    await limiter.release(client, lease)
        finally:
            assert done is not None
            done.set_result(None)

    async def _zrem(self, queue: list[tuple[SharedLimiter, str, str]]) -> bool:
        async with self.shared.redis.pipeline(transaction=False) as pipe:
            for limiter, client, lease in queue:
                pipe.zrem(limiter.redis.keys(client)[2], lease)
            await pipe.execute()
        return True

    def _first(self, plan: Plan | None) -> str | None:
        gateway = self.gateway
        return None if plan is None or gateway is None else gateway.first_callable(plan)

    @staticmethod
    def _refuse(reply: list[Any]) -> None:
        refused = RedisRateLimiter.refusal(reply[1:])
        raise key_refusal(refused) if str(reply[1]) == "key" else refused
