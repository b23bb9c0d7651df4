"""The job store's delivery states on SQLite and PostgreSQL (SPEC AS-6, ST): pending →
claimed(owner, lease) → delivered, a release back to pending, and a lease that runs out."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest

from nerve.assistant.jobs import Job, JobStore
from tests.jobs.conftest import START


def job(id_: str, due: float, *, cron: str | None = None) -> Job:
    return Job(id_, "u1", "web", "tab1", f"text {id_}", "notify", cron, due, due, None, START)


@pytest.fixture
async def stores(make_store: Callable[[], JobStore]) -> AsyncIterator[tuple[JobStore, JobStore]]:
    """Two stores on one database: two replicas' connections."""
    a, b = make_store(), make_store()
    await a.open()
    await b.open()
    yield a, b


async def test_a_pending_firing_is_claimed_by_exactly_one_of_many_racing_claims(
    stores: tuple[JobStore, JobStore],
) -> None:
    a, b = stores
    await a.insert(job("j1", START))
    claims = [s.claim("j1", START, f"owner{i}", START + 300) for i, s in enumerate([a, b] * 5)]
    won = await asyncio.gather(*claims)
    assert won.count(True) == 1
    claimed = await b.get("j1")
    assert claimed is not None and claimed.claimed_by == f"owner{won.index(True)}"
    assert claimed.next_run == START + 300 and claimed.due_at == START  # leased, still due then
    assert await a.due(START + 299, 10) == []  # nobody else sees it while the lease runs


async def test_release_returns_a_claim_to_pending_and_only_its_owner_can(
    stores: tuple[JobStore, JobStore],
) -> None:
    a, b = stores
    await a.insert(job("j1", START))
    assert await a.claim("j1", START, "a", START + 300)
    await b.release("j1", "b")  # not b's claim: nothing changes
    held = await a.get("j1")
    assert held is not None and held.claimed_by == "a"
    await a.release("j1", "a")
    (pending,) = await b.due(START, 10)
    assert pending.claimed_by is None and pending.next_run == START  # pending at its due time
    assert await b.claim("j1", START, "b", START + 300)


async def test_a_lease_that_ran_out_is_claimed_again_and_the_old_owner_can_no_longer_finish(
    stores: tuple[JobStore, JobStore],
) -> None:
    a, b = stores
    await a.insert(job("j1", START))
    assert await a.claim("j1", START, "a", START + 300)  # a claims, then stalls or dies
    (due,) = await b.due(START + 300, 10)
    assert await b.claim("j1", due.next_run, "b", START + 600)
    await a.finish("j1", "a", None)  # a wakes up: its finish must not delete b's firing
    await a.release("j1", "a")
    still = await b.get("j1")
    assert still is not None and still.claimed_by == "b"
    await b.finish("j1", "b", None)
    assert await a.get("j1") is None  # delivered: a one-shot job is gone


async def test_finishing_a_cron_firing_makes_the_next_one_pending(
    stores: tuple[JobStore, JobStore],
) -> None:
    a, _ = stores
    await a.insert(job("c1", START, cron="0 9 * * *"))
    assert await a.claim("c1", START, "a", START + 300)
    await a.finish("c1", "a", START + 86400)
    moved = await a.get("c1")
    assert moved is not None and moved.claimed_by is None
    assert moved.due_at == moved.next_run == START + 86400
    assert await a.next_after(START) == START + 86400


async def test_due_pages_in_next_run_order_and_next_after_skips_what_is_due(
    stores: tuple[JobStore, JobStore],
) -> None:
    a, _ = stores
    for i in range(7):
        await a.insert(job(f"j{i}", START + (i // 2)))  # pairs share a time: ties by id
    await a.insert(job("later", START + 100))
    first = await a.due(START + 10, 3)
    rest = await a.due(START + 10, 10, (first[-1].next_run, first[-1].id))
    assert [j.id for j in first + rest] == [f"j{i}" for i in range(7)]
    assert await a.next_after(START + 10) == START + 100
    assert await a.next_after(START + 100) is None
