"""The scheduler on SQLite and PostgreSQL: fired once across replicas and restarts, or late."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

import pytest

from nerve.assistant.bus import Bus, Inbound, Outbound
from nerve.assistant.jobs import Job, Scheduler, bus_delivery
from nerve.assistant.jobs.store import SQLiteJobStore
from nerve.gateway.resilience import ManualClock
from tests.jobs.conftest import START

MakeScheduler = Callable[..., Awaitable[Scheduler]]
Fired = list[tuple[str, str, str | None]]


def at(seconds: float) -> datetime:
    return datetime.fromtimestamp(START + seconds, UTC)


async def test_a_reminder_fires_once_at_its_time_then_is_gone(
    make_scheduler: MakeScheduler, fired: Fired
) -> None:
    s = await make_scheduler()
    job = await s.add("u1", "discord", "c1", "call mom", at=at(60))
    assert await s.tick(START + 59) == 0 and fired == []
    assert await s.tick(START + 60) == 1
    assert fired == [(job["id"], "call mom", None)]
    assert await s.tick(START + 3600) == 0
    assert await s.list("u1") == []


async def test_a_cron_job_advances_after_each_firing(
    make_scheduler: MakeScheduler, fired: Fired
) -> None:
    s = await make_scheduler()
    job = await s.add("u1", "web", "c1", "standup", cron="*/10 * * * *", mode="execute")
    first = datetime.fromisoformat(job["next_run"]).timestamp()
    assert first > START and (first % 600) == 0
    assert await s.tick(first) == 1
    (listed,) = await s.list("u1")
    assert datetime.fromisoformat(listed["next_run"]).timestamp() == first + 600
    assert await s.tick(first + 1) == 0
    assert await s.tick(first + 600) == 1 and len(fired) == 2


async def test_two_schedulers_on_one_database_fire_each_job_once(
    make_scheduler: MakeScheduler, fired: Fired
) -> None:
    a, b = await make_scheduler("a"), await make_scheduler("b")
    ids = {(await a.add("u1", "discord", "c1", f"r{i}", at=at(i)))["id"] for i in range(20)}
    for now in (START + 5, START + 20):
        counts = await asyncio.gather(a.tick(now), b.tick(now), a.tick(now), b.tick(now))
        assert sum(counts) == (6 if now == START + 5 else 14)
    assert sorted(i for i, _, _ in fired) == sorted(ids)  # each exactly once
    assert await a.list("u1") == [] == await b.list("u1")


async def test_jobs_survive_a_restart_and_a_missed_firing_comes_late_with_a_note(
    make_scheduler: MakeScheduler, fired: Fired
) -> None:
    s = await make_scheduler()
    one = await s.add("u1", "discord", "c1", "pay rent", at=at(60))
    daily = await s.add("u1", "discord", "c1", "water plants", cron="0 9 * * *")
    await s.close()
    again = await make_scheduler()  # nerve was down for two days
    assert {j["id"] for j in await again.list("u1")} == {one["id"], daily["id"]}
    now = START + 2 * 86400
    assert await again.tick(now) == 2
    notes = {text: late for _, text, late in fired}
    assert notes["pay rent"] == "late: was due at 2026-05-28T20:27:40+00:00"
    assert (notes["water plants"] or "").startswith("late: was due at 2026-05-29T09:00:00")
    (left,) = await again.list("u1")  # two missed daily firings became one late delivery
    assert datetime.fromisoformat(left["next_run"]) == datetime(2026, 5, 31, 9, tzinfo=UTC)


async def test_a_failed_delivery_or_a_dead_replica_is_retried_when_the_lease_ends(
    make_scheduler: MakeScheduler, make_store: Callable[[], SQLiteJobStore], clock: ManualClock
) -> None:
    attempts: list[str | None] = []

    async def flaky(job: Job, late: str | None) -> None:
        attempts.append(late)
        if len(attempts) == 1:
            raise ConnectionError("channel down")

    s = Scheduler(make_store(), flaky, clock, owner="a", lease_seconds=300)
    await s.open()
    await s.add("u1", "discord", "c1", "stretch", at=at(10))
    assert await s.tick(START + 10) == 0 and attempts == [None]
    assert await s.tick(START + 309) == 0  # still leased
    assert (
        await s.tick(START + 310) == 1
        and attempts[1] == "late: was due at 2026-05-28T20:26:50+00:00"
    )
    # A replica that claims and dies: the claim runs out and another fires it.
    job = await s.add("u1", "discord", "c1", "drink", at=at(400))
    assert await s.store.claim(job["id"], START + 400, "dead", START + 400 + 300)
    assert await s.tick(START + 500) == 0
    assert await s.tick(START + 700) == 1 and len(attempts) == 3


async def test_add_names_the_bad_field_and_cancel_is_per_user(
    make_scheduler: MakeScheduler,
) -> None:
    s = await make_scheduler(timezone="Asia/Kolkata")
    for kwargs, field in [
        ({"cron": "every day"}, "cron:"),
        ({}, "at or cron"),
        ({"at": at(60), "cron": "* * * * *"}, "at or cron"),
        ({"at": at(-3600)}, "at:"),
        ({"at": at(60), "mode": "shout"}, "mode:"),
    ]:
        with pytest.raises(ValueError, match=field):
            await s.add("u1", "t", "c", "x", **kwargs)  # type: ignore[arg-type]
    naive = await s.add("u1", "t", "c", "x", at=datetime(2026, 5, 29, 9, 0))
    assert naive["next_run"] == "2026-05-29T09:00:00+05:30"
    assert await s.cancel("u2", naive["id"]) is False
    assert await s.cancel("u1", naive["id"]) is True and await s.list("u1") == []


async def test_bus_delivery_notifies_the_channel_or_asks_the_agent(tmp_path, clock) -> None:
    bus = Bus()
    s = Scheduler(SQLiteJobStore(tmp_path / "j.db"), bus_delivery(bus), clock)
    await s.open()
    try:
        await s.add("u1", "discord", "42", "call mom", at=at(1))
        await s.add("u1", "web", "7", "summarise my mail", at=at(1), mode="execute")
        assert await s.tick(START + 100) == 2
        out = await anext(aiter(bus.subscribe("discord")))
        late = "late: was due at 2026-05-28T20:26:41+00:00"
        assert out == Outbound("discord", "42", f"⏰ Reminder: call mom ({late})")
        msg = await asyncio.wait_for(bus.next_inbound(), 1)
        assert isinstance(msg, Inbound) and (msg.channel, msg.chat_id, msg.user_id) == (
            "web",
            "7",
            "u1",
        )
        assert msg.text == "summarise my mail" and msg.note == late
    finally:
        await s.close()


async def test_run_fires_a_job_added_while_it_waits(tmp_path) -> None:
    done = asyncio.Event()

    async def deliver(job: Job, late: str | None) -> None:
        done.set()

    s = Scheduler(SQLiteJobStore(tmp_path / "j.db"), deliver, poll_seconds=3600)
    await s.open()
    task = asyncio.create_task(s.run())
    try:
        await s.add("u1", "t", "c", "now", at=datetime.now(UTC) + timedelta(milliseconds=50))
        await asyncio.wait_for(done.wait(), 5)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await s.close()


async def test_a_scheduler_leaves_jobs_of_channels_it_does_not_serve(
    make_scheduler: MakeScheduler, fired: Fired
) -> None:
    web_only, everything = await make_scheduler("web", channels={"web"}), await make_scheduler("b")
    await web_only.add("u1", "discord", "c1", "for discord", at=at(1))
    await web_only.add("u1", "web", "c2", "for web", at=at(1))
    assert await web_only.tick(START + 5) == 1 and [t for _, t, _ in fired] == ["for web"]
    assert await everything.tick(START + 5) == 1 and fired[-1][1] == "for discord"
