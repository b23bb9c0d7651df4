"""Group commit (SPEC ME-8, DESIGN "State and scale"), on SQLite and PostgreSQL: a write is
acknowledged once committed in the store, and concurrent writes share transactions."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from nerve.memory.groupcommit import GroupCommit
from nerve.memory.store import Query
from tests.memory.factories import rec


@pytest.fixture
async def committer(reopen):
    store = GroupCommit(reopen())
    await store.open()
    yield store
    await store.close()


async def test_concurrent_writers_share_transactions_and_every_write_is_committed(
    committer, reopen
):
    records = [rec(f"u{n % 8}", n) for n in range(400)]
    await asyncio.wait_for(asyncio.gather(*(committer.put([r]) for r in records)), 60)
    assert committer.commits < len(records) / 4  # 400 writers, far fewer transactions
    other = reopen()  # another connection, as another process would read
    await other.open()
    assert len(await other.get([r.id for r in records])) == 400


async def test_a_lone_write_is_committed_when_acknowledged(committer, reopen):
    record = rec("u", 1)
    await committer.put([record])
    other = reopen()
    await other.open()
    assert await other.get([record.id]) == [record]


async def test_a_bad_write_fails_alone_and_its_neighbours_are_committed(committer):
    good = [rec("u", n) for n in range(20)]
    bad = replace(rec("u", 99), user_id=None)  # the store's NOT NULL refuses it
    results = await asyncio.gather(
        *(committer.put([r]) for r in good[:10]),
        committer.put([bad]),
        *(committer.put([r]) for r in good[10:]),
        return_exceptions=True,
    )
    assert [type(r) for r in results].count(type(None)) == 20
    assert isinstance(results[10], Exception)
    assert len(await committer.query(Query("u"))) == 20


async def test_a_nul_is_refused_before_it_can_reach_a_shared_transaction(committer):
    with pytest.raises(ValueError, match="NUL"):
        await committer.put([rec("u", 1, data={"text": "a\x00b"})])
    assert committer.commits == 0


async def test_deletes_return_their_counts_from_a_shared_transaction(committer):
    records = [rec("u", n) for n in range(6)]
    await committer.put(records)
    counts = await asyncio.gather(
        committer.delete([records[0].id, records[1].id]),
        committer.delete([records[2].id, "missing"]),
        committer.delete_user("nobody"),
    )
    assert counts == [2, 1, 0]


async def test_close_commits_what_is_queued_and_later_writes_are_refused(reopen):
    store = GroupCommit(reopen())
    await store.open()
    # gather starts them in order: each put queues its write before close begins
    await asyncio.gather(*(store.put([rec("u", n)]) for n in range(50)), store.close())
    with pytest.raises(RuntimeError, match="not open"):
        await store.put([rec("u", 100)])
    again = reopen()
    await again.open()
    assert len(await again.query(Query("u"))) == 50
