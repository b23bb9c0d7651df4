"""Stats summed over every replica in Redis (SPEC GW-19): the local Stats as a delta buffer.

`record()` stays in-process on the hot path. `flush()` drains the local counters and pushes them
in ONE transaction (MULTI/EXEC), so a reader never sees half a flush:

    {prefix}stats:counts        HASH  "<series>\\n<field>" → summed counters, last_error
    {prefix}stats:lat:<series>  LIST  the last 1024 latencies of answered calls (RPUSH + LTRIM)
    {prefix}stats:series:<tab>  SET   the series of each table, to keep the 1000-series cap
    {prefix}stats:rejections    HASH  reason → count
    {prefix}stats:since         STR   when the counting started (wall clock)

A series is named by JSON: ["route", "default"], ["target", "openai", "default", "gpt-4o"]. A
flush that fails is absorbed back into the local buffer, to be pushed with the next one. The cap
is kept per table across replicas as well as each replica's last look allows: once a table is
seen full, new names are counted under "(other)".
"""

from __future__ import annotations

import time
from array import array
from typing import TYPE_CHECKING, Any

import orjson

from nerve.clock import Clock
from nerve.gateway.stats import Counters, Series, Stats

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["RedisStats"]

TABLES = ("all", "route", "provider", "model", "route_provider", "target", "key", "user")
_RING = 1024
_OTHER = "(other)"


class RedisStats:
    def __init__(
        self,
        redis: Redis,
        local: Stats,
        *,
        prefix: str = "nerve:",
        clock: Clock = time.time,
        max_series: int = 1000,
    ) -> None:
        self.redis = redis
        self.local = local
        self.max_series = max_series
        self._clock = clock
        self._started = clock()
        self._counts_key = f"{prefix}stats:counts"
        self._lat = f"{prefix}stats:lat:"
        self._tables = f"{prefix}stats:series:"
        self._rejections = f"{prefix}stats:rejections"
        self._since = f"{prefix}stats:since"
        self._known: dict[str, set[str]] = {t: set() for t in TABLES}
        self._sizes = dict.fromkeys(TABLES, 0)
        self._seen: list[str] = []  # series in Redis at the last read, for reset()

    async def flush(self) -> None:
        """Push the local counters into Redis; on failure they go back into the local buffer."""
        counters = self.local.drain()
        if not counters.tables["all"][()].calls and not counters.rejections:
            return
        try:
            await self._push(counters)
        except BaseException:
            self.local.absorb(counters)
            raise

    async def _push(self, counters: Counters) -> None:
        counts = self._counts_key
        async with self.redis.pipeline(transaction=True) as pipe:
            for table, rows in counters.tables.items():
                for key, series in rows.items():
                    if not series.calls:
                        continue
                    sid = self._series_id(table, key)
                    for name in Series.INTS:
                        if value := getattr(series, name):
                            pipe.hincrby(counts, f"{sid}\n{name}", value)
                    for name in Series.FLOATS:
                        if value := getattr(series, name):
                            pipe.hincrbyfloat(counts, f"{sid}\n{name}", value)
                    if series.last_error:
                        pipe.hset(counts, f"{sid}\nlast_error", series.last_error)
                    if series.ring and table != "target":  # targets show no latency
                        pipe.rpush(self._lat + sid, *map(repr, series.ring))
                        pipe.ltrim(self._lat + sid, -_RING, -1)
                    pipe.sadd(self._tables + table, sid)
            for reason, n in counters.rejections.items():
                pipe.hincrby(self._rejections, reason, n)
            pipe.set(self._since, repr(self._clock()), nx=True)
            for table in TABLES:
                pipe.scard(self._tables + table)
            results = await pipe.execute()
        self._sizes.update(zip(TABLES, results[-len(TABLES) :], strict=True))

    def _series_id(self, table: str, key: Any) -> str:
        parts = [key] if isinstance(key, str) else list(key)
        sid = orjson.dumps([table, *parts]).decode()
        known = self._known[table]
        if sid in known or table == "all":
            return sid
        if self._sizes[table] >= self.max_series:
            return orjson.dumps([table, *[_OTHER] * len(parts)]).decode()
        known.add(sid)
        self._sizes[table] += 1  # until the flush's SCARD tells the truth
        return sid

    async def merged(self) -> Stats:
        """Every replica's counters, this one's flushed first, as a Stats to take views of."""
        await self.flush()
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hgetall(self._counts_key)
            pipe.hgetall(self._rejections)
            pipe.get(self._since)
            fields, rejections, since = await pipe.execute()
        series: dict[str, Series] = {}
        for field, value in fields.items():
            sid, _, name = field.rpartition("\n")
            s = series.get(sid) or series.setdefault(sid, Series())
            if name == "last_error":
                s.last_error = value
            else:
                setattr(s, name, float(value) if name in Series.FLOATS else int(value))
        sampled = [sid for sid, s in series.items() if s.lat_n and not sid.startswith('["target"')]
        async with self.redis.pipeline(transaction=False) as pipe:
            for sid in sampled:
                pipe.lrange(self._lat + sid, 0, -1)
            rings = await pipe.execute()
        for sid, ring in zip(sampled, rings, strict=True):
            series[sid].ring = array("d", map(float, ring))
        tables: dict[str, dict[Any, Series]] = {t: {} for t in TABLES}
        for sid, s in series.items():
            table, *parts = orjson.loads(sid)
            key: Any = () if table == "all" else parts[0] if len(parts) == 1 else tuple(parts)
            tables[table][key] = s
            self._known[table].add(sid)
        self._seen = list(series)
        counters = Counters(tables, {k: int(v) for k, v in rejections.items()})
        since_at = float(since) if since else self._clock()
        return Stats.from_counters(
            counters, clock=self._clock, started=self._started, since=since_at
        )

    async def reset(self) -> Stats:
        """Clear every replica's counters; returns what was cleared."""
        previous = await self.merged()
        keys = [self._counts_key, self._rejections, self._since]
        keys += [self._tables + t for t in TABLES] + [self._lat + sid for sid in self._seen]
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.delete(*keys)
            pipe.set(self._since, repr(self._clock()))
            await pipe.execute()
        self._known = {t: set() for t in TABLES}
        self._sizes = dict.fromkeys(TABLES, 0)
        self.local.reset()
        return previous
