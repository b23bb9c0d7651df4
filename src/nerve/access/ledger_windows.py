"""The rules both ledgers share: which windows a reservation touches, when it fits, what a
refusal says and when it clears. `SqlLedger` and `RedisLedger` differ only in where the numbers
live.

A metered key has up to two windows: its budget period (`usd:<period start>`, limit
`budget.usd`) and its calendar minute (`tpm:<minute start>`, limit `tpm` tokens). A
reservation fits a window iff used + held + amount <= limit; it is held in every window or in
none. When both refuse, the budget is named: it clears last.
"""

from __future__ import annotations

import datetime as dt
import math
import uuid
from dataclasses import dataclass
from typing import Literal

from nerve.access.ledger import Charge, Hold, Spend, period_bounds
from nerve.access.principal import Principal
from nerve.errors import BudgetExceeded, RateLimited

__all__ = [
    "EPSILON",
    "NO_RESET_RETRY",
    "Window",
    "budget_window",
    "fits",
    "hold_windows",
    "minute_start",
    "new_hold",
    "refusal",
    "spend_of",
    "windows",
]

EPSILON = 1e-9  # dollars: ten reservations of $0.1 fill a $1 budget, though they sum to 0.99…9
NO_RESET_RETRY = 86400.0  # retry_after for a `total` budget: it never resets; "try tomorrow"
_ADJECTIVE = {"day": "daily", "week": "weekly", "month": "monthly", "total": "total"}


@dataclass(frozen=True, slots=True)
class Window:
    kind: Literal["usd", "tpm"]
    start: float
    end: float | None  # None: `total`, never ends
    limit: float
    amount: float  # what this reservation holds (or this settle adds) in it

    @property
    def name(self) -> str:
        """The window's id under its key: "usd:1767225600", "tpm:1767225540"."""
        start = int(self.start) if self.start.is_integer() else self.start
        return f"{self.kind}:{start}"

    def expires_at(self, hold_seconds: float) -> float | None:
        """When the window may be forgotten: a hold made just before its end may settle until
        then. None: never (`total`)."""
        return None if self.end is None else self.end + hold_seconds


def minute_start(now: float) -> float:
    return float(math.floor(now / 60) * 60)


def budget_window(principal: Principal, now: float, amount: float = 0.0) -> Window | None:
    if principal.budget is None:
        return None
    start, end = period_bounds(principal.budget.period, now)
    return Window("usd", start, end, principal.budget.usd, float(amount))


def windows(principal: Principal, charge: Charge, now: float) -> list[Window]:
    """The windows `charge` is reserved in, budget first (the order refusals are named in)."""
    found = []
    budget = budget_window(principal, now, charge.usd)
    if budget is not None:
        found.append(budget)
    if principal.tpm is not None:
        start = minute_start(now)
        found.append(Window("tpm", start, start + 60, principal.tpm, float(charge.tokens)))
    return found


def new_hold(principal: Principal, charge: Charge, reserved: list[Window]) -> Hold:
    starts = {w.kind: w.start for w in reserved}
    return Hold(principal.name, charge, starts.get("usd"), starts.get("tpm"), uuid.uuid4().hex)


def hold_windows(hold: Hold, charge: Charge) -> list[Window]:
    """The windows `hold` was made in, each with `charge`'s amount (the hold's own charge to
    release it, the actual one to bill it). Limits and ends are not known here (0, None)."""
    found = []
    if hold.period_start is not None:
        found.append(Window("usd", hold.period_start, None, 0.0, float(charge.usd)))
    if hold.minute_start is not None:
        found.append(Window("tpm", hold.minute_start, None, 0.0, float(charge.tokens)))
    return found


def fits(window: Window, used: float, held: float) -> bool:
    return used + held + window.amount <= window.limit + EPSILON


def refusal(
    principal: Principal, window: Window, used: float, held: float, now: float
) -> RateLimited:
    """The error for a reservation `window` refused, with when it would pass."""
    too_big = window.amount > window.limit + EPSILON
    name = principal.name
    if window.kind == "tpm":
        err = RateLimited("tpm", (window.end or now) - now)
        if too_big:
            err.message = (
                f"key {name!r}: this call's reservation of {window.amount:.0f} tokens exceeds"
                f" its whole limit of {window.limit:.0f} tokens per minute; lower max_tokens"
            )
            err.args = (err.message,)
        return err
    assert principal.budget is not None  # a usd window exists only for a budgeted key
    adjective = _ADJECTIVE[principal.budget.period]
    if window.end is None:
        reset, retry = "a total budget never resets", NO_RESET_RETRY
    else:
        reset, retry = f"it resets at {_iso(window.end)}", window.end - now
    if too_big:
        message = (
            f"key {name!r}: this call's reservation of {_usd(window.amount)} exceeds its whole"
            f" {_usd(window.limit)} {adjective} budget; lower max_tokens; {reset}"
        )
    else:
        in_flight = f" ({_usd(held)} more is held by calls in flight)" if held > EPSILON else ""
        message = (
            f"key {name!r} has spent {_usd(used)} of its {_usd(window.limit)} {adjective}"
            f" budget{in_flight}; {reset}"
        )
    return BudgetExceeded(message, retry)


def spend_of(principal: Principal, window: Window, used: float, held: float) -> Spend:
    assert principal.budget is not None
    return Spend(
        principal.name,
        max(0.0, used),
        max(0.0, held),
        principal.budget.period,
        window.start,
        window.end,
    )


def _iso(at: float) -> str:
    return dt.datetime.fromtimestamp(at, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _usd(amount: float) -> str:
    if amount == 0 or abs(amount) >= 0.01:
        return f"${amount:,.2f}"
    return f"${amount:.2g}"  # a cent's fraction: "$0.0031", not "$0.00"
