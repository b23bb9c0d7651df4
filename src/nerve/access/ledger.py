"""What keys spend: tokens per minute and money per period, reserved before a call, settled after.

Before a call the gateway reserves a `Charge` (the tokens it may use: the prompt's estimate plus
`max_tokens` or a default; their price) against the key's `tpm` and `budget`; after it, the hold
is settled with what the upstream reported. A reservation passes only if spent + held + charge
stays within the limit, so concurrent callers — on any replica — may overspend by at most the
difference between what was held and what was used, never by N×.

Periods are calendar boundaries in UTC (`period_bounds`): day, ISO week (from Monday), month,
and `total` (never resets). Token windows are calendar minutes.

Implementations: `SqlLedger` (the store, `storage.url`: every process on one SQLite file or one
PostgreSQL database shares it) and `RedisLedger` (with `redis.url`: one Lua script per reserve
and per settle, atomic across replicas). This module holds the seam and the period arithmetic.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Protocol

from nerve.access.principal import Period, Principal

__all__ = ["Charge", "Hold", "Ledger", "Spend", "period_bounds"]


@dataclass(frozen=True, slots=True)
class Charge:
    tokens: int = 0
    usd: float = 0.0


@dataclass(frozen=True, slots=True)
class Hold:
    """One reservation, handed back to `settle` exactly once."""

    key: str  # the principal's name
    charge: Charge
    period_start: float | None  # the budget period it was reserved in (None: no budget)
    minute_start: float | None  # the token window (None: no tpm)
    id: str = ""  # unique across processes: what the ledger knows this hold by ("" unmetered)


@dataclass(frozen=True, slots=True)
class Spend:
    """A key's spend in its current period, for /stats, `nerve keys list` and the admin panel."""

    key: str
    usd: float  # settled in the current period
    held_usd: float  # reserved by calls in flight
    period: Period | None
    period_start: float | None
    resets_at: float | None  # None for `total`


def period_bounds(period: Period, now: float) -> tuple[float, float | None]:
    """The UTC calendar period holding `now` (epoch seconds): (start, end); end None = never."""
    if period == "total":
        return 0.0, None
    t = dt.datetime.fromtimestamp(now, dt.UTC)
    day = dt.datetime(t.year, t.month, t.day, tzinfo=dt.UTC)
    if period == "day":
        start, end = day, day + dt.timedelta(days=1)
    elif period == "week":
        start = day - dt.timedelta(days=t.weekday())
        end = start + dt.timedelta(days=7)
    else:
        start = day.replace(day=1)
        end = (
            start.replace(year=start.year + 1, month=1)
            if start.month == 12
            else start.replace(month=start.month + 1)
        )
    return start.timestamp(), end.timestamp()


class Ledger(Protocol):
    async def reserve(self, principal: Principal, charge: Charge) -> Hold:
        """Hold `charge` against the key's tpm and budget, or raise RateLimited("tpm", retry)
        / BudgetExceeded (its message says when the period resets). A key with neither
        returns a hold that settles to nothing."""

    async def settle(self, hold: Hold, actual: Charge) -> None:
        """Replace the hold by what the call really used (0 when it failed before any usage)."""

    async def spend(self, principals: list[Principal]) -> list[Spend]:
        """Each budgeted key's spend in its current period."""
