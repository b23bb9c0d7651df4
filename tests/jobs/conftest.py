"""Fixtures of the jobs tests.

backend     "sqlite" or "postgres" (PostgreSQL as in tests/memory: skipped when unreachable,
            a failure when CI=true)
make_store  make_store() → another unopened JobStore on this test's (empty) database
fired       what a recording `deliver` was given: (job id, text, late note)
make_scheduler(owner) → an opened Scheduler on the shared database, on the ManualClock `clock`
mailbox     (a real dovecot IMAP server on loopback, a fresh user): tests/jobs/dovecot.py
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from nerve.assistant.jobs import Job, JobStore, Scheduler
from nerve.assistant.jobs.store import PostgresJobStore, SQLiteJobStore
from nerve.gateway.resilience import ManualClock
from tests.jobs.dovecot import dovecot_server, mailbox  # noqa: F401 - fixtures
from tests.memory.conftest import _admin, postgres_schema  # noqa: F401 - a fixture, re-used

START = 1_780_000_000.0  # 2026-05-28 20:26:40 UTC


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(START)


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def make_store(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Callable[[], JobStore]]:
    made: list[JobStore] = []
    if backend == "postgres":
        dsn, schema = request.getfixturevalue("postgres_schema")
        await _admin(dsn, f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')

    def make() -> JobStore:
        store: JobStore
        if backend == "sqlite":
            store = SQLiteJobStore(tmp_path / "nerve.db")
        else:
            store = PostgresJobStore(dsn, schema=schema)
        made.append(store)
        return store

    yield make
    for store in made:
        await store.close()


@pytest.fixture
def fired() -> list[tuple[str, str, str | None]]:
    return []


@pytest.fixture
def make_scheduler(
    make_store: Callable[[], JobStore],
    clock: ManualClock,
    fired: list[tuple[str, str, str | None]],
) -> Callable[..., Awaitable[Scheduler]]:
    async def deliver(job: Job, late: str | None) -> None:
        fired.append((job.id, job.text, late))

    async def make(owner: str = "a", **options: Any) -> Scheduler:
        scheduler = Scheduler(make_store(), deliver, clock, owner=owner, **options)
        await scheduler.open()
        return scheduler

    return make
