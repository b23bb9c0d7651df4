"""Admission in one Redis round trip when the gateway's state is shared (redis.url).

`KeyGate.admit` asks in turn: the server's limits, the key's own, the key's budget hold, and
(in `_walk`) the first candidate's breaker — four round trips with Redis, and two or three more
to give back leases and settle the hold afterwards. `SharedKeyGate` sends all of it as one
script per request, `ADMIT`:

- what earlier calls of this process owe (their leases, their holds settled with what they
  used) rides along and is paid first; a process with nothing more to admit pays it within
  `FINISH_SECONDS` (20 ms) in a script of its own, and at shutdown;
- then every limit is checked before any is taken, so a refusal anywhere takes nothing (the
  server's window is not spent by a call the key's budget refuses);
- then the first candidate's breaker and 429 cooldown are asked (its `Gate`).

    KEYS  server limits (0 or 3) | key limits (0 or 3) | first gate (0 or 2) | budget windows
          (2 each) | leases owed (1 each) | holds owed (2 per window)
    ARGV  six KEYS counts, six ARGV counts, then each section's arguments (redis_lua.py,
          ledger_redis.py); holds owed: per hold its KEYS count, ARGV count and ARGV
    reply {0, "limit" | "key", reason, retry_after} | {0, "ledger", reserve reply}
          | {1, gate verdict ("" when not asked)}

A lease is given back a little later than its call ended (by the next call, or 20 ms), which
errs towards refusing: a client at its `max_concurrent` may see a 429 for up to that long.
Whenever Redis is not usable (down, or between retries), admission falls back to the
step-by-step path of `KeyGate`, whose shared twins then apply `redis.on_error`; what is owed
waits for Redis (at most `MAX_OWED` items; beyond that leases expire on their own after the
limiter's `lease_seconds` and holds after the ledger's `hold_seconds`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from nerve.access.ledger_redis import RESERVE_LUA, SETTLE_LUA, RedisLedger, Reservation
from nerve.access.principal import Principal
from nerve.gateway.admission import KeyGate, Ticket, key_refusal
from nerve.gateway.core import Gate, Plan
from nerve.gateway.resilience.fallback import SharedBreakers, SharedCooldowns
from nerve.gateway.resilience.redis_limits import RedisRateLimiter
from nerve.gateway.resilience.redis_lua import GATE_LUA, RATE_LUA
from nerve.gateway.resilience.shared import MISS
from nerve.gateway.resilience.shared_limiter import SharedLimiter
from nerve.gateway.stats import Usage

if TYPE_CHECKING:
    from nerve.config import Target
    from nerve.gateway.resilience import LimiterSeam
    from nerve.gateway.resilience.shared import SharedState

__all__ = ["ADMIT", "SharedKeyGate"]

log = logging.getLogger("nerve.gateway")

FINISH_SECONDS = 0.02
MAX_OWED = 10_000
ADMIT = (
    RATE_LUA
    + GATE_LUA
    + RESERVE_LUA
    + SETTLE_LUA
    + """
local function slice(t, from, n)
  local out = {}
  for i = 1, n do out[i] = t[from + i - 1] end
  return out
end
local parts, ki, ai = {}, 1, 13
for s = 1, 6 do
  local nk, na = tonumber(ARGV[s]), tonumber(ARGV[s + 6])
  parts[s] = {slice(KEYS, ki, nk), slice(ARGV, ai, na)}
  ki, ai = ki + nk, ai + na
end
local server, key, gate, ledger, leases, holds = unpack(parts)
for i = 1, #leases[1] do redis.call('ZREM', leases[1][i], leases[2][i]) end
local hk, ha = 1, 1
while ha <= #holds[2] do
  local nk, na = tonumber(holds[2][ha]), tonumber(holds[2][ha + 1])
  settle_budget(slice(holds[1], hk, nk), slice(holds[2], ha + 2, na))
  hk, ha = hk + nk, ha + 2 + na
end
if #server[1] == 0 then return {1, ''} end  -- paying what is owed, admitting nobody
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
    """`KeyGate` whose admission is one script that also pays what earlier calls owe."""

    def __init__(self, shared: SharedState, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.shared = shared
        self._admit = shared.redis.register_script(ADMIT)
        self._leases: list[tuple[str, str]] = []  # owed: (leases ZSET, lease)
        self._holds: list[tuple[list[str], list[str]]] = []  # owed: settle_budget calls
        self._timer: asyncio.TimerHandle | None = None

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
        leases, holds = self._take_owed()
        owed_leases, owed_holds = _owed_sections(leases, holds)
        section(*owed_leases)
        section(*owed_holds)
        try:
            reply = await self._admit(keys=keys, args=_header(counts) + args)
        except self.shared.errors as e:
            self.shared.failed(e)
            self._owe(leases, holds)
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

    async def settle(
        self, ticket: Ticket, *, target: Target | None = None, usage: Usage | None = None,
        answered: bool = True,
    ) -> None:  # fmt: skip
        """Bill the hold now, in one script with whatever else is owed, before the answer goes
        out (owed until the next script, a kill would leave the call unbilled); with Redis
        down it stays owed, paid once Redis is back."""
        if ticket.hold is None or not isinstance(self.ledger, RedisLedger):
            return await super().settle(ticket, target=target, usage=usage, answered=answered)
        hold, ticket.hold = ticket.hold, None
        call = self.ledger.settle_call(hold, self.actual(hold, target, usage, answered))
        self._owe([], [call] if call is not None else [])
        await self.drain()

    async def leave(
        self, ticket: Ticket, *, target: Target | None = None, usage: Usage | None = None,
        answered: bool = False,
    ) -> None:  # fmt: skip
        """Owe the leases and the settled hold to Redis (paid by the next script); anything
        held in process is given back now."""
        holds: list[tuple[list[str], list[str]]] = []
        if ticket.hold is not None and isinstance(self.ledger, RedisLedger):
            hold, ticket.hold = ticket.hold, None
            call = self.ledger.settle_call(hold, self.actual(hold, target, usage, answered))
            holds = [call] if call is not None else []
        try:
            await super().leave(ticket, target=target, usage=usage, answered=answered)
        finally:
            self._owe([], holds)

    async def _release(self, ticket: Ticket) -> None:
        principal, owed = ticket.principal, []
        taken: list[tuple[LimiterSeam, str, str | None]] = [
            (self.limiter, principal.client, ticket.client_lease)
        ]
        if ticket.lease is not None:
            taken.append((self._limiter(principal), principal.client + ":own", ticket.lease))
        for limiter, client, lease in taken:
            if lease and isinstance(limiter, SharedLimiter):  # a Redis lease
                owed.append((limiter.redis.keys(client)[2], lease))
            elif lease is not None:  # "" : taken in process, while Redis was down
                await limiter.release(client, lease)
        ticket.lease = ticket.client_lease = None
        self._owe(owed, [])

    def _owe(self, leases: list[tuple[str, str]], holds: list[tuple[list[str], list[str]]]) -> None:
        room = MAX_OWED - len(self._leases) - len(self._holds)
        if len(leases) + len(holds) > room:
            log.warning("dropping what is owed to Redis past %d items: leases and holds expire "
                        "on their own", MAX_OWED)  # fmt: skip
        self._leases += leases[: max(0, room)]
        self._holds += holds[: max(0, room - len(leases))]
        if (self._leases or self._holds) and self._timer is None:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(FINISH_SECONDS, lambda: loop.create_task(self.drain()))

    def _take_owed(self) -> tuple[list[tuple[str, str]], list[tuple[list[str], list[str]]]]:
        leases, holds = self._leases, self._holds
        self._leases, self._holds = [], []
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        return leases, holds

    async def drain(self) -> None:
        """Pay what is owed now, in one script (when nothing else was admitted for a while)."""
        leases, holds = self._take_owed()
        if not leases and not holds:
            return
        (lk, la), (hk, ha) = _owed_sections(leases, holds)
        counts = [0, 0, 0, 0, 0, 0, 0, 0, len(lk), len(la), len(hk), len(ha)]
        done = await self.shared.run(
            lambda: self._admit(keys=lk + hk, args=_header(counts) + la + ha)
        )
        if done is MISS:
            self._owe(leases, holds)  # Redis is down: paid once it is back

    def _first(self, plan: Plan | None) -> str | None:
        gateway = self.gateway
        return None if plan is None or gateway is None else gateway.first_callable(plan)

    @staticmethod
    def _refuse(reply: list[Any]) -> None:
        refused = RedisRateLimiter.refusal(reply[1:])
        raise key_refusal(refused) if str(reply[1]) == "key" else refused


def _header(counts: list[int]) -> list[str]:
    """counts went in as (keys, args) pairs; the script wants the key counts, then the args."""
    return [str(n) for n in counts[0::2] + counts[1::2]]


def _owed_sections(
    leases: list[tuple[str, str]], holds: list[tuple[list[str], list[str]]]
) -> tuple[tuple[list[str], list[str]], tuple[list[str], list[str]]]:
    hold_keys = [k for keys, _ in holds for k in keys]
    hold_args = [a for keys, args in holds for a in (str(len(keys)), str(len(args)), *args)]
    return ([k for k, _ in leases], [lease for _, lease in leases]), (hold_keys, hold_args)
