"""The jobs of one process: the scheduler and the mail monitor on `storage.url`, wired to a bus.

    jobs = Jobs(config, bus, summarize=gateway_summarizer(ask, config.assistant.model))
    await jobs.start()        # opens the store (migrating it), runs the loops in the background
    services.scheduler = jobs.scheduler   # for the `reminder` tool
    ...
    await jobs.stop()

Reminders fire into the bus (`bus_delivery`) only where a channel attached to it can show them
now (`bus.can_deliver`), and a chat becoming reachable (a tab connecting) wakes the scheduler;
mail summaries go to `bus.deliver`; the channels subscribed to the bus show them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from nerve.assistant.bus import Bus
from nerve.assistant.jobs.mail import MailMonitor, Summarize
from nerve.assistant.jobs.scheduler import Scheduler, bus_delivery
from nerve.assistant.jobs.store import JobStore, job_store_from_url
from nerve.config import Config

__all__ = ["Jobs"]


class Jobs:
    def __init__(
        self,
        config: Config,
        bus: Bus,
        *,
        summarize: Summarize | None = None,
        store: JobStore | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Jobs go only to the channels attached to `bus` in this process; other channels'
        jobs, and chats without a socket here, are left to a process that can deliver them."""
        settings, mail = config.assistant.jobs, config.assistant.mail
        self.store = store if store is not None else job_store_from_url(config.storage.url)
        self.enabled = settings.enabled
        self.scheduler = Scheduler(
            self.store, bus_delivery(bus), clock, timezone=settings.timezone,
            lease_seconds=settings.lease_seconds, late_after_seconds=settings.late_after_seconds,
            poll_seconds=settings.poll_seconds, can_deliver=bus.can_deliver,
        )  # fmt: skip
        bus.on_reachable(lambda channel, chat_id: self.scheduler.wake())
        self.mail: MailMonitor | None = None
        if mail.accounts:
            self.mail = MailMonitor(
                mail.accounts, self.store, bus.deliver, clock=clock, poll_seconds=mail.poll_seconds,
                max_per_check=mail.max_per_check, summarize=summarize if mail.summarize else None,
            )  # fmt: skip
        self._tasks: list[asyncio.Task[Any]] = []

    async def start(self) -> None:
        await self.store.open()
        if self.enabled:
            self._tasks.append(asyncio.create_task(self.scheduler.run(), name="nerve-scheduler"))
        if self.mail is not None:
            self._tasks.append(asyncio.create_task(self.mail.run(), name="nerve-mail"))

    async def stop(self) -> None:
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.store.close()
