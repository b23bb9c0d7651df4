"""The charts' time series summed over every replica in PostgreSQL (no Redis, `storage.url`
names PostgreSQL): the twin of timeseries_redis.py on the store's database.

The local TimeSeries stays a delta buffer on the hot path. A background task (started by the
first call counted, or the first read) drains its minutes every `flush_seconds` and adds them
into one table in ONE statement, rows in key order (so two replicas' upserts never deadlock):

    timeseries (minute, scope, name, field) → v     scope: all | route | model
                                                    field: calls errors fallbacks tokens cost h<bin>
    INSERT ... ON CONFLICT (minute, scope, name, field) DO UPDATE SET v = timeseries.v + EXCLUDED.v

A read sums the window's rows into its buckets in the database (GROUP BY), after pushing this
replica's deltas. Rows older than 25 h are deleted every `prune_seconds`. A failure is logged
(once per outage), the drained minutes go back into the local buffer for the next flush, and
until `retry_seconds` have passed reads show this replica's unflushed minutes only, as the Redis
twin does: the database never fails a call nor the dashboard.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING

from nerve.clock import Clock
from nerve.gateway.timeseries import KEEP, Cell, Key, Minutes, TimeSeries
from nerve.store.connections import open_postgres_pool

if TYPE_CHECKING:  # asyncpg is the optional extra nerve[postgres]
    import asyncpg

__all__ = ["KEEP_MINUTES", "SqlTimeSeries", "share_sql"]

log = logging.getLogger("nerve.gateway")

KEEP_MINUTES = 25 * 60  # rows older than this are pruned (the window needs 24 h)

_UPSERT = (
    "INSERT INTO timeseries (minute, scope, name, field, v)"
    " SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::float8[])"
    " ON CONFLICT (minute, scope, name, field) DO UPDATE SET v = timeseries.v + EXCLUDED.v"
)
# $1 the window's first minute, $2 minutes per bucket, $3 the oldest minute kept, $4 the last.
_READ = (
    "SELECT $1::bigint + (minute - $1::bigint) / $2::bigint * $2::bigint AS bucket,"
    " scope, name, field, SUM(v) FROM timeseries WHERE minute >= $3 AND minute <= $4"
    " GROUP BY 1, 2, 3, 4"
)
_PRUNE = "DELETE FROM timeseries WHERE minute < $1"

Row = tuple[int, str, str, str, float]


class SqlTimeSeries:
    def __init__(self, dsn: str, schema: str, local: TimeSeries, *, clock: Clock,
                 flush_seconds: float = 1.0, retry_seconds: float = 5.0,
                 prune_seconds: float = 600.0, timeout: float = 5.0) -> None:  # fmt: skip
        self.dsn, self.schema, self.local, self.clock = dsn, schema, local, clock
        self.flush_seconds, self.retry_seconds = flush_seconds, retry_seconds
        self.prune_seconds, self.timeout = prune_seconds, timeout
        self.ok = True
        self.last_error: str | None = None
        self._pool: asyncpg.Pool | None = None
        self._lock = asyncio.Lock()  # one push at a time: a read waits for the tick's push
        self._retry_at = 0.0
        self._prune_at = 0.0
        self._task: asyncio.Task[None] | None = None
        self._closed = False

    # --- lifetime -------------------------------------------------------------------------

    def start(self) -> None:
        """Start the flush task if an event loop runs here (else the next call tries again)."""
        if self._task is not None or self._closed:
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return
        self._task = asyncio.create_task(self._every(), name="timeseries flush")

    async def close(self) -> None:
        """Stop the task, push what is left (if the database answers) and close the pool."""
        self._closed = True
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.flush()
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()

    async def _every(self) -> None:
        try:
            while True:
                await asyncio.sleep(self.flush_seconds)
                try:
                    await self.flush()
                except Exception:  # a bug in one round must not stop the next
                    log.exception("timeseries: the PostgreSQL flush failed")
        finally:
            pool = self._pool
            if not self._closed and pool is not None:  # cancelled without close(): loop exit
                self._pool = None
                pool.terminate()

    # --- flush and read -------------------------------------------------------------------

    def _usable(self) -> bool:
        return self.ok or self.clock() >= self._retry_at

    def _failed(self, error: BaseException) -> None:
        self.last_error = f"{type(error).__name__}: {error}"
        pool, self._pool = self._pool, None
        if pool is not None:  # maybe broken (closed, a server restart): a new one on the retry
            pool.terminate()
        self._retry_at = self.clock() + self.retry_seconds
        if self.ok:
            self.ok = False
            log.error(
                "TIMESERIES DOWN: PostgreSQL (schema %s) failed (%s); the admin charts show "
                "this replica's unflushed minutes",
                self.schema,
                self.last_error,
            )

    def _succeeded(self) -> None:
        if not self.ok:
            self.ok, self.last_error = True, None
            log.warning("TIMESERIES BACK: PostgreSQL (schema %s) answers again", self.schema)

    async def _db(self) -> asyncpg.Pool:
        if self._pool is None:
            self._pool = await open_postgres_pool(self.dsn, self.schema, min_size=1, max_size=2)
        return self._pool

    async def flush(self) -> bool:
        """Push the local minutes; False (they are back in the local buffer) when that failed."""
        if not self._usable():
            return False
        async with self._lock:
            minutes = self.local.drain()
            now = self.clock()
            prune = now >= self._prune_at
            if not minutes and not prune:
                return True
            rows = _rows(minutes)
            try:
                async with asyncio.timeout(self.timeout):
                    pool = await self._db()
                    if rows:
                        await pool.execute(_UPSERT, *(list(c) for c in zip(*rows, strict=True)))
                    if prune:
                        await pool.execute(_PRUNE, int(now // 60) - KEEP_MINUTES)
            except BaseException as e:  # asyncpg's, OSError, TimeoutError: "the database failed"
                self.local.absorb(minutes)
                if not isinstance(e, Exception):
                    raise  # cancelled (closing): the minutes are kept for close()'s flush
                self._failed(e)
                return False
            if prune:
                self._prune_at = now + self.prune_seconds
            self._succeeded()
            return True

    async def read(self, first: int, step: int = 1) -> Minutes:
        """Every replica's minutes from `first` on, summed per `step` minutes in the database
        (keyed by each bucket's first minute); this replica's unflushed ones while it fails."""
        if not await self.flush():
            return self.local.local(first)
        last = int(self.clock() // 60)
        try:
            async with asyncio.timeout(self.timeout):
                pool = await self._db()
                rows = await pool.fetch(_READ, first, step, max(first, last - KEEP + 1), last)
        except Exception as e:
            self._failed(e)
            return self.local.local(first)
        self._succeeded()
        return _minutes(rows)


def _clean(text: str) -> str:
    """A name PostgreSQL's text takes: no NUL, no lone surrogate (or the whole push fails)."""
    if text.isascii() and "\x00" not in text:
        return text
    return text.replace("\x00", "\ufffd").encode("utf-8", "replace").decode("utf-8")


def _rows(minutes: Minutes) -> list[Row]:
    """The minutes as (minute, scope, name, field, v) rows in key order; cleaned names that
    collide are added together (one INSERT must not touch a row twice)."""
    summed: dict[tuple[int, str, str, str], float] = {}
    for minute, cells in minutes.items():
        for (scope, name), cell in cells.items():
            fields: list[tuple[str, float]] = [(a, getattr(cell, a)) for a in Cell.INTS]
            fields.append(("cost", cell.cost))
            fields.extend((f"h{i}", n) for i, n in cell.hist.items())
            name = _clean(name)
            for field, value in fields:
                if value:
                    key = (minute, scope, name, field)
                    summed[key] = summed.get(key, 0) + value
    return [(*key, v) for key, v in sorted(summed.items())]


def _minutes(rows: list[asyncpg.Record]) -> Minutes:
    minutes: Minutes = {}
    for bucket, scope, name, field, value in rows:
        cells = minutes.get(bucket) or minutes.setdefault(bucket, {})
        key: Key = (scope, name)
        cell = cells.get(key) or cells.setdefault(key, Cell())
        if field == "cost":
            cell.cost = float(value)
        elif field.startswith("h"):
            cell.hist[int(field[1:])] = round(value)
        else:
            setattr(cell, field, round(value))
    return minutes


def share_sql(dsn: str, schema: str, local: TimeSeries, *, clock: Clock) -> SqlTimeSeries:
    """Make `local` a delta buffer pushed to PostgreSQL every second, read as every replica's
    sum. The flush task starts with the first call counted (or read) on a running loop."""
    series = SqlTimeSeries(dsn, schema, local, clock=clock)

    async def read(first: int, step: int) -> Minutes:
        series.start()
        return await series.read(first, step)

    local.reader = read
    local.on_open = series.start
    return series
