"""Fixtures of the jobs tests.

backend     "sqlite" or "postgres" (PostgreSQL as in tests/memory: skipped when unreachable,
            a failure when CI=true)
make_store  make_store() → another unopened JobStore on this test's (empty) database
fired       what a recording `deliver` was given: (job id, text, late note)
make_scheduler(owner) → an opened Scheduler on the shared database, on the ManualClock `clock`,
            delivering to `fired` (it shows everything it is given)
mailbox     (a real dovecot IMAP server on loopback, a fresh user): tests/jobs/dovecot.py
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any

import pytest

from nerve.assistant.jobs import Job, JobStore, Scheduler
from nerve.assistant.jobs.store import job_store_from_url
from nerve.gateway.resilience import ManualClock
from tests.jobs.dovecot import dovecot_server, mailbox  # noqa: F401 - fixtures
from tests.memory.conftest import backend, postgres_schema, storage_url  # noqa: F401 - fixtures

START = 1_780_000_000.0  # 2026-05-28 20:26:40 UTC


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(START)


@pytest.fixture
def make_store(storage_url: str, closing: AsyncExitStack) -> Callable[[], JobStore]:  # noqa: F811
    def make() -> JobStore:
        store = job_store_from_url(storage_url)
        closing.push_async_callback(store.close)
        return store

    return make


@pytest.fixture
def fired() -> list[tuple[str, str, str | None]]:
    return []


@pytest.fixture
def make_scheduler(
    make_store: Callable[[], JobStore],
    clock: ManualClock,
    fired: list[tuple[str, str, str | None]],
) -> Callable[..., Awaitable[Scheduler]]:
    async def deliver(job: Job, late: str | None) -> bool:
        fired.append((job.id, job.text, late))
        return True

    async def make(owner: str = "a", **options: Any) -> Scheduler:
        scheduler = Scheduler(make_store(), deliver, clock, owner=owner, **options)
        await scheduler.open()
        return scheduler

    return make
