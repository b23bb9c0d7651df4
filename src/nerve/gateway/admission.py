"""What a key's own policy costs a request on the gateway: its limits, its tokens, its money.

The server's limits (`limits.rate`) count every client; a key may add its own: `rpm` and
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
from nerve.gateway.core import Plan
from nerve.gateway.stats import Usage, cost_of, price_of

if TYPE_CHECKING:
    from nerve.config import Price, Target
    from nerve.gateway.resilience import RateLimiter
    from nerve.gateway.shared import Resilience

__all__ = ["KeyGate", "Ticket"]

log = logging.getLogger("nerve.gateway")
_CHARS_PER_TOKEN = 4  # a rough, deliberately generous estimate (most tokenizers give 3.5-4.5)
_UNLIMITED = 1_000_000_000


@dataclass(slots=True)
class Ticket:
    """A request's admission under its key: hand it back to `KeyGate.leave` exactly once."""

    principal: Principal
    lease: str | None = None  # the key's own limiter lease (None: the key has no limits)
    hold: Hold | None = None


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
        self.ledger = ledger
        self.prices = prices
        self.default_output_tokens = default_output_tokens
        self._limiters: dict[tuple[str, int | None, int | None], RateLimiter] = {}

    async def enter(self, principal: Principal) -> Ticket:
        """The key's rpm and max_parallel (429 naming which); a no-op for keys without them."""
        ticket = Ticket(principal)
        if principal.limited:
            limiter = self._limiter(principal)
            try:
                ticket.lease = await limiter.acquire(principal.client + ":own")
            except RateLimited as e:
                reason = "max_parallel" if e.reason == "concurrent" else "rpm"
                raise RateLimited(reason, e.retry_after) from None
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

    async def reserve(self, ticket: Ticket, body: Mapping[str, Any], plan: Plan) -> None:
        """Hold the call's estimated tokens and cost against the key's tpm and budget."""
        principal = ticket.principal
        if not principal.metered or self.ledger is None:
            return
        prompt = math.ceil(len(orjson.dumps(body.get("messages"))) / _CHARS_PER_TOKEN)
        output = _max_tokens(body) or self.default_output_tokens
        usd = max(
            cost_of(self._price(t), Usage(prompt_tokens=prompt, completion_tokens=output))
            for t in plan.targets
        )
        try:
            ticket.hold = await self.ledger.reserve(principal, Charge(prompt + output, usd))
        except NerveError:
            raise
        except Exception as e:  # a budget that cannot be checked is not kept: refuse
            log.error("the ledger of key budgets is unreachable: %s", e)
            raise SharedStateUnavailable(
                f"key {principal.name!r} has a budget or tpm, and the ledger that keeps them "
                "cannot be reached; retry shortly",
                retry_after=1,
            ) from None

    async def leave(
        self, ticket: Ticket, *, target: Target | None = None, usage: Usage | None = None,
        answered: bool = False,
    ) -> None:  # fmt: skip
        """Settle the hold (what `target` used, or what was held if `answered` without usage)
        and release the key's limiter lease."""
        try:
            if ticket.hold is not None and self.ledger is not None:
                hold, ticket.hold = ticket.hold, None
                if usage is not None and target is not None:
                    tokens = usage.total_tokens or usage.prompt_tokens + usage.completion_tokens
                    actual = Charge(tokens, cost_of(self._price(target), usage))
                else:
                    actual = hold.charge if answered else Charge()
                await self.ledger.settle(hold, actual)
        finally:
            if ticket.lease is not None:
                lease, ticket.lease = ticket.lease, None
                limiter = self._limiter(ticket.principal)
                await limiter.release(ticket.principal.client + ":own", lease)

    def _price(self, target: Target) -> Price | None:
        return price_of(self.prices, target.provider, target.model)

    def _limiter(self, principal: Principal) -> RateLimiter:
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


def _max_tokens(body: Mapping[str, Any]) -> int | None:
    for name in ("max_completion_tokens", "max_tokens"):
        value = body.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None
