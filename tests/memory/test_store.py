"""The `MemoryStore` contract, run unchanged on SQLite and on PostgreSQL (ME-2, ME-3, ME-5,
ME-7, ME-9): whatever one backend does, the other does too."""

from __future__ import annotations

import asyncio
import sqlite3
from dataclasses import replace

import asyncpg
import pytest

from nerve.memory.store import Query
from tests.memory.factories import T0, fact, rec

INTEGRITY = (sqlite3.IntegrityError, asyncpg.IntegrityConstraintViolationError)


async def ids_of(store, query: Query) -> list[str]:
    return [r.id for r in await store.query(query)]


async def test_put_then_get_returns_the_same_records(store):
    """ME-2: every field comes back as stored."""
    records = [rec(n=i, language="ta", session_id="s1", kind="event") for i in range(3)]
    await store.put(records)
    assert sorted(await store.get([r.id for r in records]), key=lambda r: r.id) == sorted(
        records, key=lambda r: r.id
    )


async def test_get_returns_only_the_ids_that_exist(store):
    """ME-2: unknown and repeated ids are ignored."""
    a = rec()
    await store.put([a])
    assert await store.get([a.id, "missing", a.id]) == [a]
    assert await store.get([]) == []


async def test_put_upserts_by_id_replacing_every_field(store):
    """ME-2: a second put with the same id replaces the record, last one in a batch winning."""
    a = rec(data={"v": 1})
    await store.put([a])
    b = replace(a, tier="semantic", data={"v": 2}, importance=0.9, updated_at=T0 + 5)
    c = replace(b, data={"v": 3})
    await store.put([b, c])
    assert await store.get([a.id]) == [c]
    assert await store.put([]) is None


async def test_put_stores_nothing_when_one_record_of_the_batch_is_invalid(store):
    """ME-2: a batch is one transaction, even one sent as several statements; the row that
    breaks NOT NULL rolls back the 20,000 before it."""
    good = [rec(n=i) for i in range(20_000)]
    bad = replace(rec(n=9), user_id=None)
    with pytest.raises(INTEGRITY):
        await store.put([*good, bad])
    assert await store.query(Query("u")) == []


async def test_a_batch_of_ten_thousand_new_records_is_stored_whole_with_unique_ids(store):
    """ME-2: a large batch in one call; default ids never collide."""
    records = [rec(n=i % 100, data={"i": i}) for i in range(10_000)]
    assert len({r.id for r in records}) == 10_000
    await store.put(records)
    assert len(await store.query(Query("u"))) == 10_000


async def test_query_returns_one_users_records_newest_first_ties_broken_by_id(store):
    """ME-2: created_at desc, then id desc (byte order)."""
    await store.put(
        [
            rec(n=1, id="a"),
            rec(n=2, id="B"),
            rec(n=2, id="b"),
            rec(n=2, id="a2"),
            rec(n=0, id="z"),
            rec("other", n=5, id="o"),
        ]
    )
    assert await ids_of(store, Query("u")) == ["b", "a2", "B", "a", "z"]


async def test_query_filters_are_anded(store):
    """ME-2: intent, tier, kind and session all narrow the result together."""
    target = rec(n=1, intent="task", tier="semantic", kind="event", session_id="s")
    await store.put(
        [
            target,
            replace(rec(n=2, intent="task", tier="semantic", kind="event"), session_id="t"),
            rec(n=3, intent="task", tier="semantic", kind="memory", session_id="s"),
            rec(n=4, intent="task", tier="episodic", kind="event", session_id="s"),
            rec(n=5, intent="chat", tier="semantic", kind="event", session_id="s"),
            rec("v", n=6, intent="task", tier="semantic", kind="event", session_id="s"),
        ]
    )
    query = Query("u", intent="task", tier="semantic", kind="event", session_id="s")
    assert await ids_of(store, query) == [target.id]
    assert len(await store.query(Query("u", intent="task"))) == 4
    assert len(await store.query(Query("u", tier="semantic", kind="event"))) == 3


async def test_query_time_window_includes_since_and_excludes_until(store):
    """ME-2, ME-6: [since, until) on created_at."""
    records = [rec(n=i) for i in range(5)]
    await store.put(records)
    window = Query("u", since=T0 + 1, until=T0 + 3)
    assert await ids_of(store, window) == [records[2].id, records[1].id]


async def test_query_limit_returns_the_newest_n_and_none_returns_all(store):
    """ME-2: limit None means every match."""
    records = [rec(n=i) for i in range(7)]
    await store.put(records)
    assert await ids_of(store, Query("u", limit=2)) == [records[6].id, records[5].id]
    assert len(await store.query(Query("u", limit=None))) == 7
    assert await store.query(Query("u", limit=0)) == []
    with pytest.raises(ValueError, match="limit"):
        await store.query(Query("u", limit=-1))


async def test_touch_counts_a_recall_and_records_when_it_happened(store):
    """ME-7: accessed_at = at, access_count += 1, once per id per call."""
    a, b = rec(n=1), rec(n=2)
    await store.put([a, b])
    await store.touch([a.id, a.id, "missing"], T0 + 10)
    await store.touch([a.id, b.id], T0 + 20)
    got = {r.id: r for r in await store.get([a.id, b.id])}
    assert (got[a.id].access_count, got[a.id].accessed_at) == (2, T0 + 20)
    assert (got[b.id].access_count, got[b.id].accessed_at) == (1, T0 + 20)
    assert got[a.id].data == a.data and got[a.id].updated_at == a.updated_at
    await store.touch([], T0)


async def test_delete_returns_how_many_records_existed(store):
    """ME-2: unknown and repeated ids are not counted."""
    records = [rec(n=i) for i in range(3)]
    await store.put(records)
    assert await store.delete([records[0].id, records[0].id, records[1].id, "missing"]) == 2
    assert await ids_of(store, Query("u")) == [records[2].id]
    assert await store.delete([]) == 0


async def test_delete_user_forgets_that_users_records_and_fact_history_only(store):
    """ME-2, ME-5: records and history of one user go; other users keep theirs."""
    for user in ("gone", "kept"):
        await store.put([rec(user, n=i) for i in range(3)])
        await store.put_fact(*fact(user, "alice", "city", "Chennai", T0))
    assert await store.delete_user("gone") == 4
    assert await store.query(Query("gone")) == []
    assert await store.fact_history("gone", "alice", "city") == []
    assert len(await store.query(Query("kept"))) == 4
    assert len(await store.fact_history("kept", "alice", "city")) == 1
    assert await store.delete_user("nobody") == 0


async def test_put_fact_keeps_one_record_per_entity_attribute_and_appends_its_history(store):
    """ME-5: the latest value is the record; every value is in the history, oldest first,
    matched as fact_id matches (trimmed, any case)."""
    await store.put_fact(*fact("u", "Alice", "City", "Madurai", T0 + 2))
    await store.put_fact(*fact("u", "alice ", "city", "Chennai", T0 + 1))
    await store.put_fact(*fact("u", "ALICE", "CITY", "Bengaluru", T0 + 3))
    facts = await store.query(Query("u", kind="fact"))
    assert [f.data["value"] for f in facts] == ["Bengaluru"]
    history = await store.fact_history("u", "Alice", "city")
    assert [(c.value, c.entity, c.changed_at) for c in history] == [
        ("Chennai", "alice ", T0 + 1),
        ("Madurai", "Alice", T0 + 2),
        ("Bengaluru", "ALICE", T0 + 3),
    ]
    assert await store.fact_history("u", "alice", "country") == []


async def test_put_fact_changes_nothing_when_the_history_append_fails(store):
    """ME-5: the record upsert and the history append are one transaction."""
    first, change = fact("u", "alice", "city", "Chennai", T0)
    await store.put_fact(first, change)
    second, bad_change = fact("u", "alice", "city", "Madurai", T0 + 1)
    with pytest.raises(INTEGRITY):
        await store.put_fact(second, replace(bad_change, value=None))
    assert await store.get([first.id]) == [first]
    assert await store.fact_history("u", "alice", "city") == [change]


async def test_replace_with_summary_stores_the_summary_and_deletes_the_turns(store):
    """ME-9: summary in, summarised turns out; a summary listed among the ids survives."""
    turns = [rec(n=i, kind="turn", session_id="s") for i in range(4)]
    await store.put(turns)
    summary = rec(n=10, kind="summary", session_id="s", data={"text": "they talked"})
    await store.replace_with_summary([t.id for t in turns[:3]] + [summary.id], summary)
    assert await ids_of(store, Query("u", session_id="s")) == [summary.id, turns[3].id]
    await store.replace_with_summary([], replace(summary, data={"text": "again"}))
    assert (await store.get([summary.id]))[0].data == {"text": "again"}


@pytest.mark.parametrize(
    ("break_summary", "error"),
    [
        (lambda s: replace(s, user_id=None), INTEGRITY),  # fails in the database, after DELETE
        (lambda s: replace(s, data={"when": object()}), TypeError),  # not JSON
        (lambda s: replace(s, data={"text": "a\x00b"}), ValueError),  # NUL
    ],
    ids=["constraint-violation", "not-json", "nul"],
)
async def test_replace_with_summary_changes_nothing_when_it_fails(store, break_summary, error):
    """ME-9: old turns are deleted only if the summary is stored: a failure midway (the
    deletes done, the insert refused by the database) rolls everything back."""
    turns = [rec(n=i, kind="turn", session_id="s") for i in range(4)]
    await store.put(turns)
    summary = rec(n=10, kind="summary", session_id="s")
    with pytest.raises(error):
        await store.replace_with_summary([t.id for t in turns], break_summary(summary))
    assert sorted(await ids_of(store, Query("u"))) == sorted(t.id for t in turns)
    await store.replace_with_summary([t.id for t in turns], summary)  # the store still works
    assert await ids_of(store, Query("u")) == [summary.id]


async def test_scan_yields_every_record_once_in_batches(reopen):
    """ME-2: the index rebuild reads everything (or one user) a batch at a time."""
    store = reopen(scan_batch=7)
    await store.open()
    mine = [rec(n=i % 5, data={"i": i}) for i in range(30)]  # ties on created_at
    others = [rec("v", n=i) for i in range(11)]
    await store.put(mine + others)
    scanned = [r async for r in store.scan("u")]
    assert scanned == sorted(mine, key=lambda r: (r.created_at, r.id))
    assert sorted(r.id for r in [r async for r in store.scan()]) == sorted(
        r.id for r in mine + others
    )
    assert [r async for r in store.scan("nobody")] == []


async def test_abandoned_scans_leave_the_store_usable(store):
    """ME-2: a scan holds no connection between batches, so stopping early leaks nothing."""
    await store.put([rec(n=i) for i in range(20)])
    for _ in range(12):
        scan = store.scan()
        await anext(scan)
        await scan.aclose()
    assert len(await asyncio.wait_for(store.query(Query("u")), 10)) == 20


async def test_many_concurrent_writers_and_readers_never_fail(store):
    """ME-3: 20 writers x 50 puts beside 20 readers: no "database is locked", no lost write,
    and each reader sees the count only grow."""
    writing = asyncio.Event()

    async def writer(w: int) -> None:
        for i in range(50):
            await store.put([rec(f"w{w}", n=i), rec("shared", n=w * 100 + i)])

    async def reader(r: int) -> int:
        seen, reads = 0, 0
        while writing.is_set() or reads == 0:
            count = len(await store.query(Query(f"w{r}")))
            assert count >= seen
            seen, reads = count, reads + 1
            await store.get([f"nope{reads}"])
        return reads

    async def run() -> list[int]:
        writing.set()
        readers = [asyncio.create_task(reader(r)) for r in range(20)]
        await asyncio.gather(*(writer(w) for w in range(20)))
        writing.clear()
        return await asyncio.gather(*readers)

    reads = await asyncio.wait_for(run(), 120)
    assert all(n > 0 for n in reads)
    assert len(await store.query(Query("shared"))) == 1000
    assert len(await store.query(Query("w7"))) == 50
