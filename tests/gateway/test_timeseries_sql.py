"""The admin charts' time series shared through PostgreSQL (gateway/timeseries_sql.py), without
Redis: two TimeSeries on one schema are two replicas; each pushes its minutes, either reads the
sum. Needs the PostgreSQL of tests/memory/conftest.py (skipped when unreachable, a failure in CI);
each test starts on an empty schema."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack

import asyncpg
import pytest

from nerve.config import Config, StorageConfig
from nerve.gateway.resilience import ManualClock
from nerve.gateway.state import build_resilience
from nerve.gateway.stats import Stats, Usage
from nerve.gateway.timeseries_sql import KEEP_MINUTES, SqlTimeSeries, share_sql
from tests.memory.conftest import postgres_schema  # noqa: F401 - fixture

USAGE = Usage(prompt_tokens=10, completion_tokens=5, total_tokens=15)
Make = Callable[..., SqlTimeSeries]


@pytest.fixture
async def pg(postgres_schema: tuple[str, str]) -> tuple[str, str]:  # noqa: F811
    dsn, schema = postgres_schema
    conn = await asyncpg.connect(dsn, timeout=5)
    try:
        await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        await conn.close()
    return dsn, schema


@pytest.fixture
async def replica(
    pg: tuple[str, str], clock: ManualClock, closing: AsyncExitStack
) -> AsyncIterator[Make]:
    def make(dsn: str = pg[0]) -> SqlTimeSeries:
        series = share_sql(dsn, pg[1], Stats(clock=clock).timeseries, clock=clock)
        closing.push_async_callback(series.close)
        return series

    yield make


async def rows(pg: tuple[str, str]) -> list[asyncpg.Record]:
    conn = await asyncpg.connect(pg[0], timeout=5)
    try:
        return await conn.fetch(f'SELECT * FROM "{pg[1]}".timeseries ORDER BY 1, 2, 3, 4')
    finally:
        await conn.close()


def record(series: SqlTimeSeries, latency: float, *, route: str = "default", ok: bool = True,
           model: str = "m") -> None:  # fmt: skip
    series.local.add(route, f"p/{model}", ok, latency, USAGE.total_tokens, 0.001, not ok)


async def test_two_replicas_minutes_are_summed(
    replica: Make, clock: ManualClock, pg: tuple[str, str]
) -> None:
    a, b = replica(), replica()
    for _ in range(9):
        record(a, 0.010)
    clock.advance(60)
    record(a, 0.010)
    record(b, 2.0, route="code")
    record(b, 0.0, route="code", ok=False)
    assert await a.flush() and await b.flush()
    assert a.local.local(0) == {} and b.local.local(0) == {}  # drained into the table
    record(b, 2.0, route="code")  # b flushes it when reading; a then sees it too
    other = await b.local.view("1h", "route")
    data = await a.local.view("1h", "route")
    assert data == other
    total = data["total"]
    assert total["calls"][-2:] == [9, 4] and total["errors"][-2:] == [0, 1]
    assert total["fallbacks"][-1] == 1 and total["tokens"][-2:] == [135, 60]
    assert total["cost_usd"][-2:] == [pytest.approx(0.009), pytest.approx(0.004)]
    assert total["p50_ms"][-2] == pytest.approx(10, rel=0.1)
    assert total["p95_ms"][-1] == pytest.approx(2000, rel=0.1)
    assert (
        data["series"]["code"]["calls"][-1] == 3 and sum(data["series"]["default"]["calls"]) == 10
    )
    by_model = await b.local.view("24h", "model")  # summed into 15-minute buckets in SQL
    assert list(by_model["series"]) == ["p/m"] and sum(by_model["total"]["calls"]) == 13
    assert sum(c == 13 for c in by_model["total"]["calls"]) == 1  # both minutes in one bucket
    stored = await rows(pg)
    assert {r["minute"] for r in stored} == {int(clock() // 60) - 1, int(clock() // 60)}
    calls = [r["v"] for r in stored if r["scope"] == "all" and r["field"] == "calls"]
    assert calls == [9, 4]  # one row per key, added to by each replica's upsert


async def test_concurrent_flushes_of_the_same_cells_add_up(replica: Make) -> None:
    import asyncio

    series = [replica() for _ in range(4)]
    for _round in range(3):
        for s in series:
            for route in ("r1", "r2", "r3"):
                record(s, 0.05, route=route)
        assert all(await asyncio.gather(*(s.flush() for s in series)))
    data = await series[0].local.view("1h", "route")
    assert data["total"]["calls"][-1] == 36 and data["series"]["r2"]["calls"][-1] == 12


async def test_only_25h_of_rows_are_kept_and_24h_read(
    replica: Make, clock: ManualClock, pg: tuple[str, str]
) -> None:
    a = replica()
    start = int(clock() // 60)
    record(a, 0.01)
    assert await a.flush()
    clock.advance(24 * 3600 + 120)  # past the 24 h window, not yet pruned
    record(a, 0.01)
    assert await a.flush()
    assert sum((await a.local.view("24h", "route"))["total"]["calls"]) == 1
    assert {r["minute"] for r in await rows(pg)} == {start, start + 24 * 60 + 2}
    clock.advance(3600)  # now older than 25 h, and the prune is due again
    record(a, 0.01)
    assert await a.flush()
    assert {r["minute"] for r in await rows(pg)} == {start + 24 * 60 + 2, start + 25 * 60 + 2}
    assert all(r["minute"] >= int(clock() // 60) - KEEP_MINUTES for r in await rows(pg))


async def test_an_unreachable_database_keeps_the_local_minutes(
    replica: Make, clock: ManualClock
) -> None:
    down = replica("postgresql://postgres@127.0.0.1:1/test")  # nothing listens there
    record(down, 0.05)
    assert not await down.flush()  # no raise
    assert not down.ok and down.last_error
    data = await down.local.view("1h", "route")  # not raised either: local only
    assert data["total"]["calls"][-1] == 1
    record(down, 0.05)
    assert not await down.flush()  # within retry_seconds: not even tried
    assert sum(c[("all", "")].calls for c in down.local.local(0).values()) == 2


async def test_a_broken_pool_recovers_and_pushes_what_it_kept(
    replica: Make, clock: ManualClock
) -> None:
    a, b = replica(), replica()
    record(a, 0.05)
    assert await a.flush()
    assert a._pool is not None
    await a._pool.close()  # e.g. the server went away
    record(a, 0.05)
    assert not await a.flush() and not a.ok
    assert (await a.local.view("1h", "route"))["total"]["calls"][-1] == 1  # the unflushed one
    clock.advance(a.retry_seconds)
    assert await a.flush() and a.ok  # a new pool; the kept minute is pushed
    assert (await b.local.view("1h", "route"))["total"]["calls"][-1] == 2


async def test_the_flush_task_starts_with_the_first_call_and_close_pushes(replica: Make) -> None:
    a, b = replica(), replica()
    assert a._task is None
    record(a, 0.05, model="bad\x00name\udc80")  # a name PostgreSQL's text would refuse
    assert a._task is not None
    await a.close()
    assert a._task is None and a.local.local(0) == {}
    data = await b.local.view("1h", "model")
    assert data["total"]["calls"][-1] == 1 and list(data["series"]) == ["p/bad\ufffdname?"]


def test_wired_only_without_redis_on_postgresql(pg: tuple[str, str]) -> None:
    url = f"{pg[0]}?schema={pg[1]}"
    on_pg = build_resilience(Config(storage=StorageConfig(url=url)), Stats(), clock=ManualClock())
    assert on_pg.series is not None and on_pg.series.schema == pg[1]
    on_sqlite = build_resilience(Config(), Stats(), clock=ManualClock())
    assert on_sqlite.series is None
