"""The charts' time series summed over every replica in Redis (SPEC GW-19's stats flush).

The local TimeSeries stays a delta buffer on the hot path. On each stats flush tick
(`SharedState.on_flush`) its minutes are drained and added into Redis in ONE transaction:

    {prefix}ts:<minute>   HASH  "<route|model|all>\\n<name>\\n<field>" → summed count
                                fields: calls errors fallbacks tokens cost h<bin>

Each minute's hash expires 25 h after its last write, so Redis holds at most ~1,500 of them
whatever happens to the replicas; reads ask only for the minutes of the window. A flush that fails
is absorbed back into the local buffer; while Redis is down, reads show this replica's unflushed
minutes, as /stats does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nerve.gateway.resilience.shared import MISS
from nerve.gateway.timeseries import KEEP, Cell, Key, Minutes, TimeSeries

if TYPE_CHECKING:
    from nerve.gateway.resilience.shared import SharedState

__all__ = ["RedisTimeSeries", "share"]

TTL_SECONDS = 25 * 3600


class RedisTimeSeries:
    def __init__(self, shared: SharedState, local: TimeSeries) -> None:
        self.shared = shared
        self.local = local
        self._key = f"{shared.prefix}ts:"

    async def flush(self) -> None:
        """Push the local minutes into Redis; on failure they go back into the local buffer."""
        minutes = self.local.drain()
        if not minutes:
            return
        try:
            await self._push(minutes)
        except BaseException:
            self.local.absorb(minutes)
            raise

    async def _push(self, minutes: Minutes) -> None:
        async with self.shared.redis.pipeline(transaction=True) as pipe:
            for minute, cells in minutes.items():
                key = f"{self._key}{minute}"
                for (dim, name), cell in cells.items():
                    field = f"{dim}\n{name}\n"
                    for attr in Cell.INTS:
                        if value := getattr(cell, attr):
                            pipe.hincrby(key, field + attr, value)
                    if cell.cost:
                        pipe.hincrbyfloat(key, field + "cost", cell.cost)
                    for i, n in cell.hist.items():
                        pipe.hincrby(key, f"{field}h{i}", n)
                pipe.expire(key, TTL_SECONDS)
            await pipe.execute()

    async def read(self, first: int) -> Minutes:
        """Every replica's minutes from `first` on (this one's flushed first)."""
        await self.flush()
        last = int(self.shared.clock() // 60)
        wanted = list(range(max(first, last - KEEP + 1), last + 1))
        async with self.shared.redis.pipeline(transaction=False) as pipe:
            for minute in wanted:
                pipe.hgetall(f"{self._key}{minute}")
            hashes = await pipe.execute()
        minutes: Minutes = {}
        for minute, fields in zip(wanted, hashes, strict=True):
            if fields:
                minutes[minute] = _cells(fields)
        return minutes


def _cells(fields: dict[str, str]) -> dict[Key, Cell]:
    cells: dict[Key, Cell] = {}
    for field, value in fields.items():
        dim, rest = field.split("\n", 1)  # a client-chosen model name may hold "\n"
        name, attr = rest.rsplit("\n", 1)
        cell = cells.get((dim, name)) or cells.setdefault((dim, name), Cell())
        if attr == "cost":
            cell.cost = float(value)
        elif attr.startswith("h"):
            cell.hist[int(attr[1:])] = int(value)
        else:
            setattr(cell, attr, int(value))
    return cells


def share(shared: SharedState, local: TimeSeries) -> RedisTimeSeries:
    """Make `local` a delta buffer pushed on `shared`'s flush tick, read as every replica's sum."""
    series = RedisTimeSeries(shared, local)

    async def flush() -> None:
        await shared.run(series.flush)

    async def read(first: int, step: int) -> Minutes:  # summed per minute: view() sums the rest
        minutes = await shared.run(lambda: series.read(first))
        return local.local(first) if minutes is MISS else minutes

    shared.on_flush(flush)
    local.reader = read
    return series
