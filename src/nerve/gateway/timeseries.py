"""Stats over time (the admin panel's charts): a bounded series of one-minute buckets.

`Stats.record()` calls `add()` once per upstream attempt, so it only adds numbers into the
current minute's cells, one overall, one for the route and one for the "provider/model". A cell
counts calls, errors, fallbacks, tokens and cost, and latency in a fixed log-spaced histogram
(4 bins per doubling from 1 ms, about ±9 %): histograms add up, so p50/p95 over 15 minutes or over
every replica come from summing bins, which a ring of raw samples cannot do. Only answered calls
are sampled, as in Stats. At most 1,440 minutes (24 h) are kept, older ones are dropped when a
new minute opens, and a minute holds at most 2 × `max_names` names (routes and models); past that
they count under "(other)". With Redis (timeseries_redis.py), or without it on a PostgreSQL
`storage.url` (timeseries_sql.py), this is a delta buffer: `drain()` hands the minutes over on the
flush tick and `reader` sums every replica's.
"""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable
from typing import Any

from nerve.clock import Clock

__all__ = ["BINS", "BY", "WINDOWS", "Cell", "Minutes", "TimeSeries", "bin_of", "view"]

BINS = 72  # bin 0: under 1 ms; bin i: [2^((i-1)/4), 2^(i/4)) ms; the last one is open-ended
KEEP = 1440  # minutes: 24 h
WINDOWS = {"1h": (60, 1), "24h": (96, 15)}  # window → (buckets, minutes per bucket)
BY = {"route": "route", "model": "model"}
_OTHER = "(other)"
Key = tuple[str, str]  # ("all", ""), ("route", name) or ("model", "provider/model")
Minutes = dict[int, dict[Key, "Cell"]]  # minute (unix seconds // 60) → cells
ALL: Key = ("all", "")
_TOP_S = 2 ** ((BINS - 1) / 4) / 1000  # where the open-ended last bin starts


def bin_of(latency_s: float) -> int:
    if latency_s < 0.001:
        return 0
    if not latency_s < _TOP_S:  # so also inf and NaN
        return BINS - 1
    return min(BINS - 1, int(4 * math.log2(latency_s * 1000)) + 1)


def _middle_ms(i: int) -> float:
    """A bin's representative latency: the geometric middle of its edges."""
    return 0.5 if i == 0 else 2 ** ((i - 0.5) / 4)


class Cell:
    __slots__ = ("calls", "cost", "errors", "fallbacks", "hist", "tokens")
    INTS = ("calls", "errors", "fallbacks", "tokens")

    def __init__(self) -> None:
        self.calls = self.errors = self.fallbacks = self.tokens = 0
        self.cost = 0.0
        self.hist: dict[int, int] = {}  # sparse: most minutes see a few bins

    def merge(self, other: Cell) -> None:
        self.calls += other.calls
        self.errors += other.errors
        self.fallbacks += other.fallbacks
        self.tokens += other.tokens
        self.cost += other.cost
        for i, n in other.hist.items():
            self.hist[i] = self.hist.get(i, 0) + n

    def quantile_ms(self, q: float) -> float | None:
        """Nearest-rank quantile over the histogram; None when nothing was sampled."""
        n = sum(self.hist.values())
        if not n:
            return None
        rank, seen = max(1, math.ceil(q * n)), 0
        for i in sorted(self.hist):
            seen += self.hist[i]
            if seen >= rank:
                return round(_middle_ms(i), 3)
        return None  # unreachable: the ranks add up to n


class TimeSeries:
    def __init__(self, *, clock: Clock = time.time, max_names: int = 200) -> None:
        self._clock = clock  # wall seconds: minutes must agree across replicas and with the page
        self.max_names = max_names
        self._minutes: Minutes = {}
        self._minute = -1
        self._cells: dict[Key, Cell] = {}
        self._trios: dict[tuple[str, str], tuple[Cell, Cell, Cell]] = {}  # this minute's cells
        # Set when the series is shared (timeseries_redis.share, timeseries_sql.share_sql):
        # reader(first, step) reads every replica's sum (minutes, or step-minute buckets keyed by
        # their first minute); on_open runs when add() opens a minute (starts a flush task).
        self.reader: Callable[[int, int], Awaitable[Minutes]] | None = None
        self.on_open: Callable[[], None] | None = None

    def _cell(self, key: Key) -> Cell:
        cells = self._cells
        cell = cells.get(key)
        if cell is None:  # a new name this minute: past the cap it joins "(other)"
            full = len(cells) >= 2 * self.max_names + 1
            cell = cells.setdefault((key[0], _OTHER) if full else key, Cell())
        return cell

    def add(self, route: str, model: str, ok: bool, latency_s: float, tokens: int, cost: float,
            fallback: bool) -> None:  # fmt: skip
        minute = int(self._clock() // 60)
        if minute != self._minute:
            self._open(minute)
        b = bin_of(latency_s) if ok else -1
        trio = self._trios.get((route, model))
        if trio is None:  # the minute's first call of this route and model: find the cells once
            trio = (self._cell(ALL), self._cell(("route", route)), self._cell(("model", model)))
            if len(self._trios) < 4 * self.max_names:  # client-chosen names: bounded too
                self._trios[(route, model)] = trio
        for cell in trio:
            cell.calls += 1
            cell.errors += not ok
            cell.fallbacks += fallback
            cell.tokens += tokens
            cell.cost += cost
            if b >= 0:
                cell.hist[b] = cell.hist.get(b, 0) + 1

    def _open(self, minute: int) -> None:
        if self.on_open is not None:
            self.on_open()
        self._minute = minute
        self._cells = self._minutes.setdefault(minute, {})
        self._trios = {}
        for old in [m for m in self._minutes if m <= minute - KEEP]:
            del self._minutes[old]  # the 24 h bound

    def drain(self) -> Minutes:
        """Hand over every minute counted so far and count from zero (a delta buffer's flush)."""
        minutes, self._minutes, self._minute, self._cells = self._minutes, {}, -1, {}
        return minutes

    def absorb(self, minutes: Minutes) -> None:
        """Add minutes back in (a flush that failed)."""
        for minute, cells in minutes.items():
            mine = self._minutes.setdefault(minute, {})
            for key, cell in cells.items():
                mine.setdefault(key, Cell()).merge(cell)
        self._minute = -1  # the next add() finds its minute's cells again

    def local(self, first: int) -> Minutes:
        return {m: cells for m, cells in self._minutes.items() if m >= first}

    async def view(self, window: str, by: str) -> dict[str, Any]:
        """The chart data of `window` ("1h", "24h") per `by` ("route", "model")."""
        count, step = WINDOWS[window]
        last = int(self._clock() // 60) // step * step
        first = last - (count - 1) * step
        minutes = await self.reader(first, step) if self.reader is not None else self.local(first)
        return view(minutes, first=first, count=count, step=step, dim=BY[by], window=window)


def view(minutes: Minutes, *, first: int, count: int, step: int, dim: str,
         window: str) -> dict[str, Any]:  # fmt: skip
    """Minutes summed into `count` buckets of `step` minutes from minute `first`, as arrays."""
    buckets: dict[Key, list[Cell]] = {ALL: [Cell() for _ in range(count)]}
    for minute, cells in minutes.items():
        i = (minute - first) // step
        if not 0 <= i < count:
            continue
        for key, cell in cells.items():
            if key == ALL or key[0] == dim:
                row = buckets.get(key) or buckets.setdefault(key, [Cell() for _ in range(count)])
                row[i].merge(cell)
    total = buckets.pop(ALL)
    return {
        "window": window,
        "by": dim,
        "bucket_seconds": step * 60,
        "timestamps": [(first + i * step) * 60 for i in range(count)],
        "total": _arrays(total),
        "series": {key[1]: _arrays(row) for key, row in sorted(buckets.items())},
    }


def _arrays(row: list[Cell]) -> dict[str, list[Any]]:
    return {
        "calls": [c.calls for c in row],
        "errors": [c.errors for c in row],
        "fallbacks": [c.fallbacks for c in row],
        "tokens": [c.tokens for c in row],
        "cost_usd": [round(c.cost, 8) for c in row],
        "p50_ms": [c.quantile_ms(0.5) for c in row],
        "p95_ms": [c.quantile_ms(0.95) for c in row],
    }
