"""Reminders and cron jobs: persisted in the store, fired once across replicas, never dropped.

`Scheduler.tick(now)` fires what is due: it claims each firing by compare-and-set in the store
(`JobStore.claim`), so schedulers sharing a database fire it once; then calls `deliver(job,
late)` and deletes a one-shot job or moves a cron job to its next time after `now`. A firing
missed while nerve was down is delivered late with a note, not dropped (several missed cron
firings become one). If delivery fails, or the replica dies holding the claim, the claim's
lease ends and the firing is retried. `run()` ticks forever, waking early when a job is added.

`bus_delivery(bus)` is the `deliver` of a server: "notify" sends an `Outbound` to the channel
the job came from, "execute" publishes an `Inbound` so the agent runs the text as a request.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Collection
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING, Any, Literal
from zoneinfo import ZoneInfo

from croniter import croniter

from nerve.assistant.jobs.store import Job, JobStore

if TYPE_CHECKING:
    from nerve.assistant.bus import Bus

__all__ = ["Deliver", "Scheduler", "bus_delivery", "parse_at"]

log = logging.getLogger("nerve.jobs")

Deliver = Callable[[Job, "str | None"], Awaitable[None]]  # (job, late note or None)
Mode = Literal["notify", "execute"]


def parse_at(text: str, tz: tzinfo) -> datetime:
    """An ISO 8601 time; naive means in `tz`. ValueError naming the field when unreadable."""
    try:
        when = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"at: {text!r} is not an ISO 8601 time (e.g. 2026-05-01T09:00)") from None
    return when if when.tzinfo is not None else when.replace(tzinfo=tz)


class Scheduler:
    def __init__(
        self,
        store: JobStore,
        deliver: Deliver,
        clock: Callable[[], float] = time.time,
        *,
        timezone: str = "UTC",
        owner: str | None = None,
        lease_seconds: float = 300,
        late_after_seconds: float = 60,
        poll_seconds: float = 15,
        max_jobs_per_user: int = 100,
        channels: Collection[str] | None = None,
    ) -> None:
        self.store = store
        self.deliver = deliver
        self.clock = clock
        self.tz = ZoneInfo(timezone)
        self.owner = owner or uuid.uuid4().hex  # this replica, in claims
        self.lease = lease_seconds
        self.late_after = late_after_seconds
        self.poll = poll_seconds
        self.max_jobs = max_jobs_per_user
        # The channels this process delivers to (None: all). A replica without Discord must not
        # claim a Discord reminder: it would go to a bus queue nobody reads.
        self.channels = None if channels is None else frozenset(channels)
        self._wake = asyncio.Event()

    async def open(self) -> None:
        await self.store.open()

    async def close(self) -> None:
        await self.store.close()

    def _iso(self, ts: float) -> str:
        return datetime.fromtimestamp(ts, self.tz).isoformat(timespec="seconds")

    def _next_cron(self, expr: str, after: float) -> float:
        return float(croniter(expr, datetime.fromtimestamp(after, self.tz)).get_next(float))

    def describe(self, job: Job) -> dict[str, Any]:
        return {
            "id": job.id,
            "text": job.text,
            "mode": job.mode,
            "cron": job.cron,
            "next_run": self._iso(job.due_at),
            "channel": job.channel,
            "chat_id": job.chat_id,
        }

    async def add(
        self,
        user_id: str,
        channel: str,
        chat_id: str,
        text: str,
        *,
        at: datetime | None = None,
        cron: str | None = None,
        mode: Mode = "notify",
    ) -> dict[str, Any]:
        """A one-shot job (`at`) or a recurring one (`cron`). ValueError naming the field."""
        now = self.clock()
        if not text.strip():
            raise ValueError("text: say what to remind or do")
        if mode not in ("notify", "execute"):
            raise ValueError(f"mode: {mode!r} is not notify or execute")
        if (at is None) == (cron is None):
            raise ValueError("at or cron: give exactly one (a time, or a cron schedule)")
        if cron is not None:
            cron = cron.strip()
            if not croniter.is_valid(cron):
                raise ValueError(f"cron: {cron!r} is not a cron schedule (e.g. '0 9 * * 1-5')")
            due = self._next_cron(cron, now)
        else:
            assert at is not None
            when = at if at.tzinfo is not None else at.replace(tzinfo=self.tz)
            due = when.timestamp()
            if due < now - self.late_after:
                raise ValueError(f"at: {self._iso(due)} is in the past (now {self._iso(now)})")
        if len(await self.store.of_user(user_id)) >= self.max_jobs:
            raise ValueError(f"at most {self.max_jobs} jobs per user: cancel some first")
        job = Job(uuid.uuid4().hex[:12], user_id, channel, chat_id, text.strip(), mode, cron,
                  due, due, None, now)  # fmt: skip
        await self.store.insert(job)
        self._wake.set()
        return self.describe(job)

    async def list(self, user_id: str) -> list[dict[str, Any]]:
        return [self.describe(job) for job in await self.store.of_user(user_id)]

    async def cancel(self, user_id: str, id: str) -> bool:
        """Whether this user had a job by that id (another user's jobs are not theirs to cancel)."""
        return await self.store.delete(user_id, id)

    async def tick(self, now: float | None = None, *, limit: int = 100) -> int:
        """Fire what is due at `now` (default: the clock); the number of firings delivered."""
        now = self.clock() if now is None else now
        fired = 0
        for job in await self.store.due(now, limit):
            if self.channels is not None and job.channel not in self.channels:
                continue
            if not await self.store.claim(job.id, job.next_run, self.owner, now + self.lease):
                continue  # another replica has it
            late = None
            if now - job.due_at > self.late_after:
                late = f"late: was due at {self._iso(job.due_at)}"
            try:
                await self.deliver(job, late)
            except Exception:
                log.exception("job %s: delivery failed; retried when its lease ends", job.id)
                continue
            next_due = None if job.cron is None else self._next_cron(job.cron, now)
            await self.store.finish(job.id, self.owner, next_due)
            fired += 1
        return fired

    async def run(self) -> None:
        """Tick forever: at the next due time, every `poll_seconds` (other replicas' jobs), or
        as soon as a job is added."""
        while True:
            self._wake.clear()
            now = self.clock()
            wait = self.poll
            try:
                await self.tick(now)
                soonest = await self.store.due(now + self.poll, 1)
                if soonest:
                    wait = max(0.0, min(wait, soonest[0].next_run - now))
            except Exception:
                log.exception("scheduler tick failed; retrying in %.0f s", self.poll)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=wait)


def bus_delivery(bus: Bus) -> Deliver:
    """notify → an Outbound to the job's channel; execute → an Inbound the agent answers."""
    from nerve.assistant.bus import Inbound, Outbound

    async def deliver(job: Job, late: str | None) -> None:
        if job.mode == "execute":
            await bus.publish(Inbound(job.channel, job.chat_id, job.user_id, job.text, note=late))
        else:
            text = f"⏰ Reminder: {job.text}" + (f" ({late})" if late else "")
            await bus.deliver(Outbound(job.channel, job.chat_id, text))

    return deliver
