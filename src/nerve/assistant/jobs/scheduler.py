"""Reminders and cron jobs: persisted in the store, delivered once across replicas, never dropped.

`Scheduler.tick(now)` fires what is due and deliverable here. A firing is claimed (compare-and-set
in the store, `JobStore.claim`) only by a process where `can_deliver(channel, chat_id)` holds
right now: a web chat socket of that chat open in this process, the Discord bot connected. Then
`deliver(job, late)` must say it was shown; only then is a one-shot job deleted or a cron job
moved to its next time after `now`. A channel that could not take it releases the claim; the
firing stays pending, with a log line, until some process can deliver it, then comes late with
a note (several missed cron firings become one). A delivery that raises, or a replica that dies
holding the claim, is retried when the claim's lease ends.

Exactly once, with one window left open: a replica that dies after the channel showed a firing
but before the store recorded it delivers it again when the lease ends. Each firing carries a
stable `Outbound.id` so a client that remembers what it showed (the web chat page) skips it.

`run()` ticks forever: at the next due time, every `poll_seconds` (other replicas' jobs), as
soon as a job is added here, and when a chat becomes reachable (`wake`: a tab connected).

`bus_delivery(bus)` is the `deliver` of a server: "notify" shows an `Outbound` through
`bus.deliver_now`, "execute" hands an `Inbound` to this process's agent (delivered once handed
over; its answer travels like any reply).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import datetime, tzinfo
from typing import Any, Literal
from zoneinfo import ZoneInfo

from croniter import croniter

from nerve.assistant.bus import Bus, Inbound, Outbound
from nerve.assistant.jobs.store import Job, JobStore

__all__ = ["CanDeliver", "Deliver", "Scheduler", "bus_delivery", "parse_at"]

log = logging.getLogger("nerve.jobs")

Deliver = Callable[[Job, "str | None"], Awaitable[bool]]  # (job, late note) → shown?
CanDeliver = Callable[[str, str], bool]  # (channel, chat_id) → can a channel here show it now?
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
        can_deliver: CanDeliver | None = None,
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
        # Whether this process can show a job's message now (None: always). A replica without
        # the chat's socket, or without Discord, must not claim it: nobody here would see it.
        self.can_deliver = can_deliver or (lambda channel, chat_id: True)
        self._wake = asyncio.Event()
        self._kept: set[tuple[str, float]] = set()  # firings logged as kept: one line each

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
        self.wake()
        return self.describe(job)

    async def list(self, user_id: str) -> list[dict[str, Any]]:
        return [self.describe(job) for job in await self.store.of_user(user_id)]

    async def cancel(self, user_id: str, id: str) -> bool:
        """Whether this user had a job by that id (another user's jobs are not theirs to cancel)."""
        return await self.store.delete(user_id, id)

    def wake(self) -> None:
        """Tick now: a job was added, or a chat became reachable (a tab connected)."""
        self._wake.set()

    async def tick(self, now: float | None = None, *, limit: int = 100) -> int:
        """Fire what is due at `now` (default: the clock); the number of firings delivered.
        Reads every due job, a page of `limit` at a time, so kept ones never hide the others."""
        now = self.clock() if now is None else now
        fired, kept = 0, set[tuple[str, float]]()
        after: tuple[float, str] | None = None
        while True:
            page = await self.store.due(now, limit, after)
            for job in page:
                fired += await self._fire(job, now, kept)
            if len(page) < limit:
                break
            after = (page[-1].next_run, page[-1].id)
        self._kept &= kept  # forget firings that are no longer kept (delivered elsewhere)
        return fired

    async def _fire(self, job: Job, now: float, kept: set[tuple[str, float]]) -> int:
        if not self.can_deliver(job.channel, job.chat_id):
            self._keep(job, kept, "no channel here can deliver to it now")
            return 0
        if not await self.store.claim(job.id, job.next_run, self.owner, now + self.lease):
            return 0  # another replica has it
        late = None
        if now - job.due_at > self.late_after:
            late = f"late: was due at {self._iso(job.due_at)}"
        try:
            delivered = await self.deliver(job, late)
        except Exception:
            log.exception("job %s: delivery failed; retried when its lease ends", job.id)
            return 0
        if not delivered:
            await self.store.release(job.id, self.owner)
            self._keep(job, kept, "its channel could not take it just now")
            return 0
        next_due = None if job.cron is None else self._next_cron(job.cron, now)
        await self.store.finish(job.id, self.owner, next_due)
        self._log_delivered(job, now, late is not None)
        return 1

    def _log_delivered(self, job: Job, now: float, late: bool) -> None:
        """A line and a record (`nerve_record`: the admin panel stores its fields as a
        JOB_DELIVERED event): a delivered one-shot job is deleted, this is what is left of it."""
        fields = {"kind": "JOB_DELIVERED", "id": job.id, "user_id": job.user_id,
                  "channel": job.channel, "chat_id": job.chat_id, "mode": job.mode,
                  "cron": job.cron, "subject": job.text[:200], "due_at": job.due_at,
                  "delivered_at": now, "late": late}  # fmt: skip
        log.info("job %s of %s delivered to %s/%s (due %s%s)", job.id, job.user_id, job.channel,
                 job.chat_id, self._iso(job.due_at), ", late" if late else "",
                 extra={"nerve_record": fields})  # fmt: skip

    def _keep(self, job: Job, kept: set[tuple[str, float]], why: str) -> None:
        key = (job.id, job.due_at)
        kept.add(key)
        if key not in self._kept:
            self._kept.add(key)
            log.info(
                "job %s for %s/%s (due %s) kept pending: %s", job.id, job.channel, job.chat_id,
                self._iso(job.due_at), why,
            )  # fmt: skip

    async def run(self) -> None:
        """Tick forever: at the next due time, every `poll_seconds` (other replicas' jobs), or
        as soon as `wake` is called."""
        while True:
            self._wake.clear()
            now = self.clock()
            wait = self.poll
            try:
                await self.tick(now)
                soonest = await self.store.next_after(now)
                if soonest is not None:
                    wait = max(0.0, min(wait, soonest - self.clock()))
            except Exception:
                log.exception("scheduler tick failed; retrying in %.0f s", self.poll)
            # asyncio.timeout, not wait_for: on 3.11 wait_for drops a cancel that arrives as
            # the wake does, and `stop` then waits for this loop forever.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait):
                    await self._wake.wait()


def bus_delivery(bus: Bus) -> Deliver:
    """notify → an Outbound shown by the job's channel now; execute → an Inbound the agent here
    answers. Pair it with `can_deliver=bus.can_deliver`."""

    async def deliver(job: Job, late: str | None) -> bool:
        if job.mode == "execute":
            await bus.publish(Inbound(job.channel, job.chat_id, job.user_id, job.text, note=late))
            return True
        text = f"⏰ Reminder: {job.text}" + (f" ({late})" if late else "")
        firing = f"job-{job.id}-{job.due_at:.0f}"  # the same on a retry: a client can skip it
        return await bus.deliver_now(Outbound(job.channel, job.chat_id, text, id=firing))

    return deliver
