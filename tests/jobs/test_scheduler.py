"""The scheduler on SQLite and PostgreSQL (SPEC AS-6): fired once across replicas and restarts, or
late; claimed only where a channel can show it now, else kept pending, never dropped."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from nerve.assistant.bus import Bus, Inbound, Outbound
from nerve.assistant.jobs import Job, JobStore, Scheduler, bus_delivery
from nerve.assistant.jobs.store import SQLiteJobStore
from nerve.channels.base import BusFed
from nerve.channels.terminal import TerminalChannel
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

    async def flaky(job: Job, late: str | None) -> bool:
        attempts.append(late)
        if len(attempts) == 1:
            raise ConnectionError("channel down")
        return True

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


class Shown(BusFed):
    """A channel of the test attached to the bus: shows what it is sent, in `shown`."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.shown: list[Outbound] = []

    async def send(self, out: Outbound) -> None:
        self.shown.append(out)


async def test_bus_delivery_shows_a_reminder_on_its_channel_or_asks_the_agent(
    tmp_path, clock
) -> None:
    bus = Bus()
    discord = Shown("discord")
    await discord.start(bus)
    s = Scheduler(SQLiteJobStore(tmp_path / "j.db"), bus_delivery(bus), clock,
                  can_deliver=bus.can_deliver)  # fmt: skip
    await s.open()
    try:
        job = await s.add("u1", "discord", "42", "call mom", at=at(1))
        await s.add("u1", "web", "7", "summarise my mail", at=at(1), mode="execute")
        await s.add("u1", "web", "8", "for a chat nobody here serves", at=at(1))
        assert bus.can_deliver("web", "7") is False  # no web channel in this process
        assert await s.tick(START + 100) == 1
        late = "late: was due at 2026-05-28T20:26:41+00:00"
        firing = f"job-{job['id']}-{START + 1:.0f}"
        assert discord.shown == [
            Outbound("discord", "42", f"⏰ Reminder: call mom ({late})", id=firing)
        ]
        web = Shown("web")
        await web.start(bus)  # a web chat here now: the execute job goes to the agent
        assert await s.tick(START + 101) == 2
        msg = await asyncio.wait_for(bus.next_inbound(), 1)
        assert isinstance(msg, Inbound) and (msg.channel, msg.chat_id, msg.user_id) == (
            "web",
            "7",
            "u1",
        )
        assert msg.text == "summarise my mail" and msg.note == late
        assert [o.chat_id for o in web.shown] == ["8"]
    finally:
        await s.close()
        await discord.stop()


async def test_run_fires_a_job_added_while_it_waits(tmp_path) -> None:
    done = asyncio.Event()

    async def deliver(job: Job, late: str | None) -> bool:
        done.set()
        return True

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


async def test_a_job_no_channel_here_can_deliver_stays_pending_then_comes_late_once(
    make_scheduler: MakeScheduler, fired: Fired, caplog: pytest.LogCaptureFixture
) -> None:
    """The issue's closed tab: a replica without the chat's socket leaves the reminder pending
    (one log line, not one per tick); once a process can deliver it, it comes late, once."""
    open_here: set[tuple[str, str]] = set()
    a = await make_scheduler("a", can_deliver=lambda ch, chat: (ch, chat) in open_here)
    b = await make_scheduler("b", can_deliver=lambda ch, chat: False)
    job = await a.add("u1", "web", "tab1", "stretch", at=at(10))
    caplog.set_level(logging.INFO, logger="nerve.jobs")
    for now in (START + 10, START + 20, START + 400):  # past any lease: nobody claimed it
        assert await a.tick(now) == 0 and await b.tick(now) == 0
    kept = [r for r in caplog.records if "kept pending" in r.getMessage()]
    assert len(kept) == 2 and all("web/tab1" in r.getMessage() for r in kept)  # a once, b once
    stored = await a.store.get(job["id"])
    assert stored is not None and stored.claimed_by is None
    assert stored.next_run == stored.due_at == START + 10  # pending, not leased

    open_here.add(("web", "tab1"))  # the tab connected to a
    assert await b.tick(START + 500) == 0
    assert await a.tick(START + 500) == 1
    assert fired == [(job["id"], "stretch", "late: was due at 2026-05-28T20:26:50+00:00")]
    assert await a.tick(START + 501) == 0 and await a.list("u1") == []


async def test_a_channel_that_cannot_take_it_releases_the_firing_at_once(
    make_store: Callable[[], JobStore], clock: ManualClock
) -> None:
    """A socket that closed between the check and the send: the claim is released, so the
    process that now has the chat delivers it at its next tick, without waiting for a lease."""
    shown: list[str] = []

    async def closed(job: Job, late: str | None) -> bool:
        return False

    async def open_(job: Job, late: str | None) -> bool:
        shown.append(job.text)
        return True

    a = Scheduler(make_store(), closed, clock, owner="a", lease_seconds=300)
    b = Scheduler(make_store(), open_, clock, owner="b", lease_seconds=300)
    for s in (a, b):
        await s.open()
    await a.add("u1", "web", "tab1", "tea", at=at(5))
    assert await a.tick(START + 5) == 0
    (job,) = await a.store.due(START + 5, 10)
    assert job.claimed_by is None and job.next_run == START + 5
    assert await b.tick(START + 6) == 1 and shown == ["tea"]
    await a.close()
    await b.close()


async def test_kept_jobs_never_hide_the_ones_a_process_can_deliver(
    make_scheduler: MakeScheduler, fired: Fired
) -> None:
    s = await make_scheduler(can_deliver=lambda ch, chat: chat == "open")
    for i in range(25):
        await s.add("u1", "web", f"closed{i}", f"r{i}", at=at(i))
    await s.add("u2", "web", "open", "due last", at=at(30))
    assert await s.tick(START + 60, limit=10) == 1  # three pages of kept jobs before it
    assert [t for _, t, _ in fired] == ["due last"]


async def test_run_delivers_as_soon_as_a_chat_becomes_reachable(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A tab connecting wakes the scheduler (Bus.reachable): its reminder comes without waiting
    for the next poll (an hour here)."""
    bus, lines = Bus(), asyncio.Queue[str]()
    terminal = TerminalChannel(user_id="u1", write=lines.put_nowait, interactive=False)
    s = Scheduler(SQLiteJobStore(tmp_path / "j.db"), bus_delivery(bus),
                  can_deliver=bus.can_deliver, poll_seconds=3600)  # fmt: skip
    bus.on_reachable(lambda channel, chat_id: s.wake())
    await s.open()
    await s.add("u1", "terminal", "terminal", "drink water", at=datetime.now(UTC))
    kept = _LogEvent("kept pending")
    caplog.set_level(logging.INFO, logger="nerve.jobs")
    logging.getLogger("nerve.jobs").addHandler(kept)
    task = asyncio.create_task(s.run())
    try:
        await asyncio.wait_for(kept.wait(), 10)  # it ticked: nobody here to show it to
        await terminal.start(bus)  # attaching says "reachable"
        line = await asyncio.wait_for(lines.get(), 10)
        assert line.startswith("⏰ Reminder: drink water")
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        logging.getLogger("nerve.jobs").removeHandler(kept)
        await terminal.stop()
        await s.close()


class _LogEvent(logging.Handler):
    """Set once a record containing `text` is logged (on the loop's thread, as the scheduler's)."""

    def __init__(self, text: str) -> None:
        super().__init__(logging.INFO)
        self.text, self.seen = text, asyncio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if self.text in record.getMessage():
            self.seen.set()

    async def wait(self) -> None:
        await self.seen.wait()


async def test_a_stop_that_arrives_with_a_wake_still_stops_the_loop(tmp_path) -> None:
    waiting = asyncio.Event()

    class Signalling(SQLiteJobStore):
        async def next_after(self, now: float) -> float | None:
            found = await super().next_after(now)
            waiting.set()  # the loop's next step is its wait
            return found

    async def deliver(job: Job, late: str | None) -> bool:
        return True

    s = Scheduler(Signalling(tmp_path / "j.db"), deliver, poll_seconds=3600)
    await s.open()
    task = asyncio.create_task(s.run())
    try:
        await waiting.wait()
        await asyncio.sleep(0)  # let it enter the wait
        s.wake()  # a job added just as the server stops
        task.cancel()
        async with asyncio.timeout(10):  # a lost cancel would wait for the next poll, an hour
            await asyncio.gather(task, return_exceptions=True)
        assert task.cancelled()
    finally:
        task.cancel()
        await s.close()
