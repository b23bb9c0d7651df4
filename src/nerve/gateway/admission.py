"""Admission to the gateway: the server's limits, a key's own, its tokens and its money.

`KeyGate.admit` lets a request in or raises (429 naming the limit, 403, 503), and `leave`
hands back what it took; shared_admit.py does the same in one Redis round trip. The server's
limits (`limits.rate`) count every client; a key may add its own: `rpm` and
`max_parallel` (a limiter per key, in Redis when the gateway's state is shared), and `tpm` and
`budget`, which are metered: before the call a `Charge` is reserved in the ledger — the
prompt's estimated tokens plus `max_tokens` (else `default_output_tokens`), priced at the
dearest candidate, since a fallback may answer — and after it the hold is settled with the
usage the upstream reported (streams included) at the price of the model that answered. A
call whose usage never came (the client left midway) is billed what was held.

A key with a budget may use priced models only (`prices`): spend that cannot be counted cannot
be kept within a budget, so unpriced candidates are dropped from its plan (403 if none is left).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import orjson

from nerve.access.ledger import Charge, Hold, Ledger
from nerve.access.principal import Principal
from nerve.config import RateConfig
from nerve.errors import Forbidden, NerveError, RateLimited, SharedStateUnavailable
from nerve.gateway.core import Gate, Gateway, Plan
from nerve.gateway.stats import Usage, cost_of, price_of

if TYPE_CHECKING:
    from nerve.config import Price, Target
    from nerve.gateway.resilience import LimiterSeam
    from nerve.gateway.state import Resilience

__all__ = ["KeyGate", "Ticket", "key_refusal"]

log = logging.getLogger("nerve.gateway")
_CHARS_PER_TOKEN = 4  # a rough, deliberately generous estimate (most tokenizers give 3.5-4.5)
_UNLIMITED = 1_000_000_000


@dataclass(slots=True)
class Ticket:
    """A request's admission: hand it back to `KeyGate.leave` exactly once."""

    principal: Principal
    client_lease: str | None = None  # the server limiter's lease (None: not taken)
    lease: str | None = None  # the key's own limiter lease (None: the key has no limits)
    hold: Hold | None = None
    gate: Gate | None = None  # the first candidate's gate, when admission asked it too


class KeyGate:
    def __init__(
        self,
        resilience: Resilience,
        ledger: Ledger | None,
        prices: Mapping[str, Price],
        *,
        default_output_tokens: int = 1024,
    ) -> None:
        self.resilience = resilience
        self.limiter = resilience.limiter  # the server's limits; replaced by a reload
        self.gateway: Gateway | None = None  # whose candidates admission may gate ahead
        self.ledger = ledger
        self.prices = prices
        self.default_output_tokens = default_output_tokens
        self._limiters: dict[tuple[str, int | None, int | None], LimiterSeam] = {}

    async def admit(
        self, principal: Principal, body: Mapping[str, Any] | None = None,
        plan: Plan | None = None,
    ) -> Ticket:  # fmt: skip
        """Take the server's limits, then the key's rpm/max_parallel, then (with a plan) hold
        the call's charge; what was taken is given back if a later step refuses."""
        ticket = Ticket(principal)
        ticket.client_lease = await self.limiter.acquire(principal.client)
        try:
            if principal.limited:
                try:
                    ticket.lease = await self._limiter(principal).acquire(_own(principal))
                except RateLimited as e:
                    raise key_refusal(e) from None
            if plan is not None and body is not None:
                await self._reserve(ticket, body, plan)
        except BaseException:
            await self.leave(ticket)
            raise
        return ticket

    def restrict(self, principal: Principal, plan: Plan) -> Plan:
        """A budgeted key's plan without the candidates nobody has priced."""
        if principal.budget is None:
            return plan
        priced = tuple(t for t in plan.targets if self._price(t) is not None)
        if not priced:
            raise Forbidden(
                f"key {principal.name!r} has a budget, and no model of route {plan.route!r} "
                f"has a price ({', '.join(map(str, plan.targets))}): add them to `prices`",
                code="unpriced_model",
            )
        return plan if len(priced) == len(plan.targets) else replace(plan, targets=priced)

    def charge(self, body: Mapping[str, Any], plan: Plan) -> Charge:
        """What a call may cost: its estimated tokens, at the dearest candidate's price."""
        prompt = math.ceil(len(orjson.dumps(body.get("messages"))) / _CHARS_PER_TOKEN)
        output = _max_tokens(body) or self.default_output_tokens
        usd = max(
            cost_of(self._price(t), Usage(prompt_tokens=prompt, completion_tokens=output))
            for t in plan.targets
        )
        return Charge(prompt + output, usd)

    async def _reserve(self, ticket: Ticket, body: Mapping[str, Any], plan: Plan) -> None:
        """Hold the call's estimated tokens and cost against the key's tpm and budget."""
        principal = ticket.principal
        if not principal.metered or self.ledger is None:
            return
        try:
            ticket.hold = await self.ledger.reserve(principal, self.charge(body, plan))
        except NerveError:
            raise
        except Exception as e:  # a budget that cannot be checked is not kept: refuse
            log.error("the ledger of key budgets is unreachable: %s", e)
            raise SharedStateUnavailable(
                f"key {principal.name!r} has a budget or tpm, and the ledger that keeps them "
                "cannot be reached; retry shortly",
                retry_after=1,
            ) from None

    async def settle(
        self, ticket: Ticket, *, target: Target | None = None, usage: Usage | None = None,
        answered: bool = True,
    ) -> None:  # fmt: skip
        """Bill the hold now: what `target` used, or what was held if `answered` without
        usage. The endpoint calls it before an answer goes out, so an answer a client has is
        billed even if this process dies the next instant."""
        if ticket.hold is not None and self.ledger is not None:
            hold, ticket.hold = ticket.hold, None
            await self.ledger.settle(hold, self.actual(hold, target, usage, answered))

    async def leave(
        self, ticket: Ticket, *, target: Target | None = None, usage: Usage | None = None,
        answered: bool = False,
    ) -> None:  # fmt: skip
        """Settle the hold, unless `settle` did already, and release the leases."""
        try:
            await self.settle(ticket, target=target, usage=usage, answered=answered)
        finally:
            await self._release(ticket)

    def actual(
        self, hold: Hold, target: Target | None, usage: Usage | None, answered: bool
    ) -> Charge:
        """What a call used: `target`'s price of its usage; what was held if it answered
        without reporting usage (the client left midway); nothing if no model answered."""
        if usage is not None and target is not None:
            tokens = usage.total_tokens or usage.prompt_tokens + usage.completion_tokens
            return Charge(tokens, cost_of(self._price(target), usage))
        return hold.charge if answered else Charge()

    async def drain(self) -> None:
        """Send what is still owed to shared state (nothing here: all of it is in process)."""

    async def _release(self, ticket: Ticket) -> None:
        principal = ticket.principal
        try:
            if ticket.lease is not None:
                lease, ticket.lease = ticket.lease, None
                await self._limiter(principal).release(_own(principal), lease)
        finally:
            if ticket.client_lease is not None:
                lease, ticket.client_lease = ticket.client_lease, None
                await self.limiter.release(principal.client, lease)

    def _price(self, target: Target) -> Price | None:
        return price_of(self.prices, target.provider, target.model)

    def _limiter(self, principal: Principal) -> LimiterSeam:
        key = (principal.name, principal.rpm, principal.max_parallel)
        limiter = self._limiters.get(key)
        if limiter is None:
            rpm = principal.rpm or _UNLIMITED
            rate = RateConfig(
                window_requests=rpm, window_seconds=60, burst=rpm, refill_per_second=rpm / 60,
                max_concurrent=principal.max_parallel or _UNLIMITED,
            )  # fmt: skip
            limiter = self._limiters[key] = self.resilience.limiter_for(rate)
        return limiter


def _own(principal: Principal) -> str:
    """The client the key's own limits count, apart from the server's (`key:<name>`)."""
    return principal.client + ":own"


def key_refusal(error: RateLimited) -> RateLimited:
    """A key limiter's refusal in the key's terms: rpm or max_parallel."""
    return RateLimited("max_parallel" if error.reason == "concurrent" else "rpm", error.retry_after)


def _max_tokens(body: Mapping[str, Any]) -> int | None:
    for name in ("max_completion_tokens", "max_tokens"):
        value = body.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None
