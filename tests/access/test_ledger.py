"""Budgets and tokens per minute (SPEC KY-2, KY-3): one scenario suite over SqlLedger on SQLite,
SqlLedger on PostgreSQL and RedisLedger, on the real services; then `period_bounds` alone.

Time is a ManualClock per ledger, set to UTC calendar instants, so periods and minutes end when
the test says. "Two ledgers" are two instances with connections of their own on one store, as
two replicas (or two processes on one SQLite file) would be.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

import pytest
from redis.asyncio import Redis

from nerve.access.ledger import Charge, Ledger, Spend, period_bounds
from nerve.access.ledger_redis import RESERVE_LUA, RedisLedger
from nerve.access.ledger_sql import SqlLedger
from nerve.access.principal import Budget, Period, Principal
from nerve.errors import BudgetExceeded, RateLimited
from nerve.gateway.resilience import ManualClock
from tests.gateway.conftest import redis_client, redis_prefix, redis_url  # noqa: F401 - fixtures
from tests.memory.conftest import postgres_schema, storage_url  # noqa: F401 - fixtures


def at(iso: str) -> float:
    """Epoch seconds of a UTC instant written 2026-01-01T00:00:00."""
    return dt.datetime.fromisoformat(iso).replace(tzinfo=dt.UTC).timestamp()


def key(usd: float | None = None, period: Period = "month", tpm: int | None = None) -> Principal:
    return Principal("ci", tpm=tpm, budget=Budget(usd, period) if usd is not None else None)


MakeLedger = Callable[..., Coroutine[Any, Any, Ledger]]


@pytest.fixture(params=["sqlite", "postgres", "redis"])
def backend(request: pytest.FixtureRequest) -> str:
    """Also the `backend` that tests/memory's `storage_url` builds a database for."""
    return str(request.param)


@dataclass(frozen=True)
class Store:
    """What this test's ledgers share: a storage.url, or a Redis client factory and prefix."""

    url: str = ""
    redis: Callable[[], Any] | None = None
    prefix: str = ""


@pytest.fixture
def where(backend: str, request: pytest.FixtureRequest) -> Store:
    """An empty database (tests/memory's `storage_url`) or a fresh Redis key prefix. Resolved
    here, outside the event loop: async fixtures cannot be requested from inside one."""
    if backend != "redis":
        return Store(url=str(request.getfixturevalue("storage_url")))
    client = request.getfixturevalue("redis_client")
    return Store(redis=client, prefix=str(request.getfixturevalue("redis_prefix")))


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(at("2026-03-10T12:00:00"))  # a Tuesday, on a minute boundary


@pytest.fixture
async def make(where: Store, clock: ManualClock) -> AsyncIterator[MakeLedger]:
    """make(clock=..., hold_seconds=...) → another opened ledger on this test's store, with a
    connection of its own; all closed at teardown."""
    opened: list[SqlLedger] = []

    async def new(clock: ManualClock = clock, **options: Any) -> Ledger:
        if where.redis is not None:
            return RedisLedger(where.redis(), prefix=where.prefix, clock=clock, **options)
        ledger = SqlLedger(where.url, clock=clock, **options)
        await ledger.open()
        opened.append(ledger)
        return ledger

    yield new
    for ledger in opened:
        await ledger.close()


@pytest.fixture
async def ledger(make: MakeLedger) -> Ledger:
    return await make()


async def spent(ledger: Ledger, principal: Principal) -> tuple[float, float]:
    (spend,) = await ledger.spend([principal])
    return round(spend.usd, 9), round(spend.held_usd, 9)


async def refused(ledger: Ledger, principal: Principal, charge: Charge) -> RateLimited:
    with pytest.raises(RateLimited) as caught:
        await ledger.reserve(principal, charge)
    return caught.value


async def test_a_reservation_within_the_budget_is_held_until_settled(ledger: Ledger) -> None:
    """KY-3: reserve holds the charge; settle replaces the hold by what the call used."""
    ci = key(1.0)
    hold = await ledger.reserve(ci, Charge(tokens=500, usd=0.5))
    assert (hold.key, hold.period_start) == ("ci", at("2026-03-01T00:00:00"))
    assert await spent(ledger, ci) == (0.0, 0.5)
    await ledger.settle(hold, Charge(tokens=200, usd=0.2))
    assert await spent(ledger, ci) == (0.2, 0.0)
    await ledger.reserve(ci, Charge(usd=0.8))  # 0.2 used + 0.8 = the whole budget
    await refused(ledger, ci, Charge(usd=0.01))


async def test_over_budget_is_refused_naming_the_reset_and_holds_nothing(
    make: MakeLedger,
) -> None:
    """KY-3: the message says what was spent of what, and when it resets; retry_after agrees."""
    clock = ManualClock(at("2025-12-15T06:00:00"))
    ledger, ci = await make(clock), key(20.0)
    await ledger.settle(await ledger.reserve(ci, Charge(usd=19.95)), Charge(usd=20.0))
    err = await refused(ledger, ci, Charge(usd=0.1))
    assert isinstance(err, BudgetExceeded) and err.status == 429
    assert err.code == "budget_exceeded"
    assert err.message == (
        "key 'ci' has spent $20.00 of its $20.00 monthly budget; it resets at 2026-01-01T00:00:00Z"
    )
    assert err.retry_after == at("2026-01-01T00:00:00") - clock()
    assert await spent(ledger, ci) == (20.0, 0.0)


async def test_the_message_counts_what_calls_in_flight_hold(ledger: Ledger) -> None:
    """KY-3: a budget filled by holds says so, rather than claiming it was spent."""
    ci = key(1.0, "day")
    await ledger.reserve(ci, Charge(usd=0.75))
    err = await refused(ledger, ci, Charge(usd=0.5))
    assert "has spent $0.00 of its $1.00 daily budget ($0.75 more is held by calls in flight)" in (
        err.message
    )
    assert "resets at 2026-03-11T00:00:00Z" in err.message


async def test_a_call_bigger_than_the_whole_limit_is_refused_as_such(ledger: Ledger) -> None:
    """KY-2/KY-3: no wait would let it pass, and the message says why."""
    err = await refused(ledger, key(1.0), Charge(usd=2.5))
    assert isinstance(err, BudgetExceeded)
    assert "this call's reservation of $2.50 exceeds its whole $1.00 monthly budget" in err.message
    err = await refused(ledger, key(tpm=100), Charge(tokens=150))
    assert err.reason == "tpm" and not isinstance(err, BudgetExceeded)
    assert "reservation of 150 tokens exceeds its whole limit of 100 tokens per minute" in (
        err.message
    )


@pytest.mark.parametrize(
    ("period", "before", "reset"),
    [
        ("day", "2026-03-10T23:59:59.500", "2026-03-11T00:00:00"),
        ("week", "2026-01-04T23:59:00", "2026-01-05T00:00:00"),  # Sunday → Monday
        ("month", "2025-12-31T23:59:30", "2026-01-01T00:00:00"),  # December → January
    ],
)
async def test_budgets_reset_at_the_calendar_boundary(
    make: MakeLedger, period: Period, before: str, reset: str
) -> None:
    """KY-3: a spent budget refuses until its UTC period ends, then starts from zero."""
    clock = ManualClock(at(before))
    ledger, ci = await make(clock), key(1.0, period)
    await ledger.settle(await ledger.reserve(ci, Charge(usd=1.0)), Charge(usd=1.0))
    err = await refused(ledger, ci, Charge(usd=0.1))
    assert f"resets at {reset}Z" in err.message
    assert err.retry_after == pytest.approx(at(reset) - at(before))
    clock.advance(err.retry_after)
    hold = await ledger.reserve(ci, Charge(usd=1.0))
    assert hold.period_start == at(reset)
    (spend,) = await ledger.spend([ci])
    assert spend == Spend("ci", 0.0, 1.0, period, at(reset), spend.resets_at)
    assert spend.resets_at == period_bounds(period, at(reset))[1]


async def test_a_total_budget_never_resets(make: MakeLedger) -> None:
    """KY-3: `total` refuses for good, says so, and asks to retry no sooner than a day."""
    clock = ManualClock(at("2026-03-10T12:00:00"))
    ledger, ci = await make(clock), key(1.0, "total")
    await ledger.settle(await ledger.reserve(ci, Charge(usd=0.5)), Charge(usd=1.0))
    err = await refused(ledger, ci, Charge(usd=0.1))
    assert "a total budget never resets" in err.message and err.retry_after == 86400
    clock.advance(400 * 86400)
    await refused(ledger, ci, Charge(usd=0.1))
    assert await ledger.spend([ci]) == [Spend("ci", 1.0, 0.0, "total", 0.0, None)]


async def test_a_call_straddling_the_boundary_is_billed_to_the_period_it_reserved_in(
    make: MakeLedger,
) -> None:
    """KY-3: settled after midnight, a December reservation is December's spend."""
    clock = ManualClock(at("2025-12-31T23:59:50"))
    ledger, ci = await make(clock), key(1.0)
    hold = await ledger.reserve(ci, Charge(usd=0.7))
    clock.advance(20)
    await ledger.settle(hold, Charge(usd=0.6))
    assert await spent(ledger, ci) == (0.0, 0.0)
    december = await make(ManualClock(at("2025-12-31T23:59:59")))
    assert await spent(december, ci) == (0.6, 0.0)
    await ledger.reserve(ci, Charge(usd=1.0))  # January is whole


async def test_tokens_per_minute_refuse_until_the_next_minute(
    ledger: Ledger, clock: ManualClock
) -> None:
    """KY-2: a calendar minute of `tpm` tokens; retry_after is what is left of the minute."""
    ci = key(tpm=100)
    clock.advance(10)
    first = await ledger.reserve(ci, Charge(tokens=60))
    assert first.minute_start == at("2026-03-10T12:00:00") and first.period_start is None
    err = await refused(ledger, ci, Charge(tokens=50))
    assert (err.reason, err.retry_after) == ("tpm", 50)
    await ledger.settle(first, Charge(tokens=20))
    await ledger.reserve(ci, Charge(tokens=80))  # 20 used + 80 held: the whole minute
    clock.advance(50)
    await ledger.reserve(ci, Charge(tokens=100))  # 12:01, a fresh window
    assert await ledger.spend([ci]) == []  # spend lists budgeted keys only


async def test_tpm_and_budget_are_reserved_together_or_not_at_all(ledger: Ledger) -> None:
    """KY-2/KY-3: when one limit refuses, the other holds nothing for the refused call."""
    ci = key(1.0, tpm=100)
    await ledger.reserve(ci, Charge(tokens=90, usd=0.1))
    err = await refused(ledger, ci, Charge(tokens=20, usd=0.1))
    assert err.reason == "tpm"
    assert await spent(ledger, ci) == (0.0, 0.1)  # the budget did not hold the refused call
    err = await refused(ledger, ci, Charge(tokens=5, usd=0.95))
    assert isinstance(err, BudgetExceeded)
    await ledger.reserve(ci, Charge(tokens=10, usd=0.0))  # 90 + 10: the 5 was not held


async def test_two_ledgers_under_concurrent_load_admit_exactly_the_budget(
    make: MakeLedger,
) -> None:
    """KY-3: 40 attempts of $0.1 on a $1 budget, 16 at a time, through two instances with their
    own connections: exactly 10 are admitted (no overspend by N×)."""
    ledgers, ci = [await make(), await make()], key(1.0)
    attempts, admitted, refusals = iter(range(40)), [], []

    async def worker() -> None:
        for n in attempts:  # shared: each attempt is made once, by whichever worker is free
            try:
                admitted.append(await ledgers[n % 2].reserve(ci, Charge(usd=0.1)))
            except BudgetExceeded:
                refusals.append(n)

    await asyncio.wait_for(asyncio.gather(*(worker() for _ in range(16))), timeout=60)
    assert (len(admitted), len(refusals)) == (10, 30)
    assert len({hold.id for hold in admitted}) == 10
    assert await spent(ledgers[1], ci) == (0.0, 1.0)


async def test_holds_of_a_process_that_died_expire(make: MakeLedger, clock: ManualClock) -> None:
    """KY-3: a hold never settled stops counting after hold_seconds; settling it after that
    bills nothing (documented: hold_seconds must exceed the longest call)."""
    ledger, ci = await make(hold_seconds=300), key(1.0)
    lost = await ledger.reserve(ci, Charge(usd=0.6))
    clock.advance(299)
    await refused(ledger, ci, Charge(usd=0.6))
    clock.advance(1)
    assert await spent(ledger, ci) == (0.0, 0.0)
    await ledger.settle(lost, Charge(usd=0.6))  # too late: whether dropped yet or not
    assert await spent(ledger, ci) == (0.0, 0.0)
    await ledger.reserve(ci, Charge(usd=0.6))
    await ledger.settle(lost, Charge(usd=0.6))
    assert await spent(ledger, ci) == (0.0, 0.6)


async def test_settling_twice_changes_nothing_and_held_never_goes_negative(
    ledger: Ledger,
) -> None:
    """KY-3: settle is idempotent per hold; a settle for a long-gone window is a no-op."""
    ci = key(1.0, tpm=100)
    hold = await ledger.reserve(ci, Charge(tokens=50, usd=0.5))
    await ledger.settle(hold, Charge(tokens=30, usd=0.3))
    await ledger.settle(hold, Charge(tokens=30, usd=0.3))
    assert await spent(ledger, ci) == (0.3, 0.0)
    await ledger.reserve(ci, Charge(tokens=70, usd=0.7))  # exactly what is left of both


async def test_a_key_without_limits_touches_no_storage(where: Store) -> None:
    """KY-2: an unmetered key's hold has no windows; reserve and settle need no store at all
    (here: a SQL ledger never opened, a Redis client of a port nothing listens on)."""
    ledger: Ledger
    client = Redis.from_url("redis://127.0.0.1:9", decode_responses=True)
    ledger = RedisLedger(client) if where.redis is not None else SqlLedger(where.url)
    free = Principal("free", rpm=10)
    hold = await ledger.reserve(free, Charge(tokens=10**9, usd=1e6))
    assert (hold.period_start, hold.minute_start, hold.id) == (None, None, "")
    await ledger.settle(hold, Charge(tokens=10**9, usd=1e6))
    assert await ledger.spend([free]) == []
    await client.aclose()


# What only Redis has: key expiry and a reservation script other scripts can include.


@pytest.fixture
def redis_ledger(
    redis_client: Any,  # noqa: F811
    redis_prefix: str,  # noqa: F811
    clock: ManualClock,
) -> RedisLedger:
    return RedisLedger(redis_client(), prefix=redis_prefix, clock=clock)


async def test_redis_windows_expire_after_their_end_but_total_never(
    redis_ledger: RedisLedger,
    redis_prefix: str,  # noqa: F811
    clock: ManualClock,
) -> None:
    """KY-3: a window's keys live hold_seconds (+1 s) past its end; `total` keys have no TTL."""
    await redis_ledger.reserve(key(1.0, "day", tpm=100), Charge(tokens=1, usd=0.1))
    base = f"{redis_prefix}ledger:{{ci}}:"
    day, minute = int(at("2026-03-10T00:00:00")), int(clock())
    day_ttl = await redis_ledger.redis.pttl(f"{base}usd:{day}:holds")
    assert (12 * 3600 + 600) * 1000 < day_ttl <= (12 * 3600 + 600 + 1) * 1000
    minute_ttl = await redis_ledger.redis.pttl(f"{base}tpm:{minute}")
    assert (60 + 600) * 1000 < minute_ttl <= (60 + 600 + 1) * 1000
    await redis_ledger.reserve(Principal("forever", budget=Budget(5.0, "total")), Charge(usd=0.1))
    assert await redis_ledger.redis.pttl(f"{redis_prefix}ledger:{{forever}}:usd:0") == -1


async def test_the_reserve_function_runs_inside_a_larger_script(
    redis_ledger: RedisLedger,
) -> None:
    """KY-3: RESERVE_LUA defines reserve_budget(keys, argv) for an admission script to call
    beside its own checks; the plan gives its KEYS/ARGV and reads its reply."""
    combined = RESERVE_LUA + "local r = reserve_budget(KEYS, ARGV)\nreturn r\n"
    ci = key(1.0)
    plan = redis_ledger.plan(ci, Charge(usd=0.75))
    assert plan is not None
    hold = plan.outcome(
        await redis_ledger.redis.eval(combined, len(plan.keys), *plan.keys, *plan.args)
    )
    assert await spent(redis_ledger, ci) == (0.0, 0.75)
    again = redis_ledger.plan(ci, Charge(usd=0.5))
    assert again is not None
    reply = await redis_ledger.redis.eval(combined, len(again.keys), *again.keys, *again.args)
    with pytest.raises(BudgetExceeded):
        again.outcome(reply)
    await redis_ledger.settle(hold, Charge(usd=0.25))
    assert await spent(redis_ledger, ci) == (0.25, 0.0)
    assert redis_ledger.plan(Principal("free"), Charge(usd=1.0)) is None


# period_bounds: UTC calendar periods.


@pytest.mark.parametrize(
    ("period", "now", "start", "end"),
    [
        ("day", "2026-03-10T12:34:56", "2026-03-10T00:00:00", "2026-03-11T00:00:00"),
        ("day", "2026-03-11T00:00:00", "2026-03-11T00:00:00", "2026-03-12T00:00:00"),
        ("week", "2026-01-04T23:59:59", "2025-12-29T00:00:00", "2026-01-05T00:00:00"),
        ("week", "2026-01-05T00:00:00", "2026-01-05T00:00:00", "2026-01-12T00:00:00"),
        ("month", "2024-02-29T23:00:00", "2024-02-01T00:00:00", "2024-03-01T00:00:00"),
        ("month", "2025-12-31T23:59:59", "2025-12-01T00:00:00", "2026-01-01T00:00:00"),
        ("month", "2026-01-01T00:00:00", "2026-01-01T00:00:00", "2026-02-01T00:00:00"),
    ],
)
def test_periods_are_utc_calendar_spans_from_their_first_instant(
    period: Period, now: str, start: str, end: str
) -> None:
    """KY-3: days from midnight, weeks from Monday, months from the 1st, all UTC."""
    assert period_bounds(period, at(now)) == (at(start), at(end))


def test_a_total_period_started_at_the_epoch_and_never_ends() -> None:
    """KY-3."""
    assert period_bounds("total", at("2026-03-10T12:00:00")) == (0.0, None)
