"""Change versions in the store (migration 4), run on SQLite and PostgreSQL: what lets any
process prove its search cache fresh (SPEC ME-2, ME-3; DESIGN "State and scale")."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from nerve.memory.ops import Op
from tests.memory.factories import fact, rec


async def entries(store, user: str, since: int) -> dict[str, int]:
    return {e.id: e.version async for e in store.changed(user, since)}


async def test_a_user_never_written_is_at_version_zero(store):
    assert await store.version("nobody") == 0
    assert await entries(store, "nobody", -1) == {}
    assert await store.deleted("nobody", 0) == ([], False)


async def test_each_write_transaction_raises_the_version_of_the_users_it_writes(store):
    await store.put([rec("a", 1), rec("a", 2), rec("b", 1)])
    assert (await store.version("a"), await store.version("b")) == (1, 1)
    await store.put([rec("a", 3)])
    assert (await store.version("a"), await store.version("b")) == (2, 1)
    await store.write([Op("put", ([rec("a", 4)],)), Op("put", ([rec("c", 1)],))])
    assert [await store.version(u) for u in "abc"] == [3, 1, 1]


async def test_changed_returns_what_was_written_after_a_version_as_it_is_now(store):
    first, second = rec("u", 1), rec("u", 2)
    await store.put([first, second])
    assert await entries(store, "u", -1) == {first.id: 1, second.id: 1}
    await store.put([rec("u", 1, id=first.id, data={"text": "rewritten"})])
    assert await entries(store, "u", 1) == {first.id: 2}
    (entry,) = [e async for e in store.changed("u", 1)]
    assert (entry.text, entry.user_id, entry.kind) == ("rewritten note", "u", "memory")
    assert await entries(store, "u", 2) == {}


async def test_touching_records_is_not_a_change(store):
    """A recall updates access statistics; search text is untouched, so caches stay valid."""
    record = rec("u", 1)
    await store.put([record])
    await store.touch([record.id], 1e9)
    assert await store.version("u") == 1


async def test_deletions_leave_tombstones_that_say_what_went(store):
    keep, doomed = rec("u", 1), rec("u", 2)
    await store.put([keep, doomed])
    assert await store.delete([doomed.id, "no-such-id"]) == 1
    assert await store.version("u") == 2
    assert await store.deleted("u", 1) == ([doomed.id], False)
    assert await store.deleted("u", 2) == ([], False)
    assert await entries(store, "u", -1) == {keep.id: 1}


async def test_forgetting_a_user_is_one_tombstone_for_everything(store):
    await store.put([rec("u", n) for n in range(5)])
    await store.delete_user("u")
    assert await store.deleted("u", 1) == ([], True)
    assert await entries(store, "u", -1) == {}
    await store.put([rec("u", 9)])  # the user starts again, at a higher version
    assert await store.version("u") == 3


async def test_a_summary_replacing_turns_tombstones_them_and_stamps_itself(store):
    turns = [rec("u", n, kind="turn", session_id="s") for n in range(3)]
    await store.put(turns)
    summary = rec("u", 10, kind="summary", session_id="s", data={"text": "sum"})
    await store.replace_with_summary([t.id for t in turns], summary)
    gone = await store.deleted("u", 1)
    assert sorted(gone.ids) == sorted(t.id for t in turns)
    assert await entries(store, "u", 1) == {summary.id: 2}


async def test_a_fact_upsert_is_a_change_of_its_user(store):
    record, change = fact("u", "Asha", "city", "Pune", 1.0)
    await store.put_fact(record, change)
    record2, change2 = fact("u", "Asha", "city", "Chennai", 2.0)
    await store.put_fact(record2, change2)
    assert await entries(store, "u", 1) == {record.id: 2}


async def test_a_failed_write_changes_no_version(store):
    await store.put([rec("u", 1)])
    bad = Op("put", ([replace(rec("u", 2), data={"t": "\x00"})],))
    with pytest.raises(ValueError, match="NUL"):
        await store.write([Op("put", ([rec("u", 3)],)), bad])
    assert await store.version("u") == 1
    assert len(await entries(store, "u", -1)) == 1


async def test_changed_pages_through_many_records_in_version_order(reopen):
    store = reopen(scan_batch=7)
    await store.open()
    for start in range(0, 50, 10):
        await store.put([rec("u", n) for n in range(start, start + 10)])
    found = [(e.version, e.id) async for e in store.changed("u", -1)]
    assert len(found) == 50 == len(set(found))
    assert found == sorted(found)
    assert {v for v, _ in found} == {1, 2, 3, 4, 5}
    assert len([e async for e in store.changed("u", 3)]) == 20


async def test_two_connections_writing_one_user_at_once_lose_no_version(reopen):
    """Two stores on one database (as two processes): each of 2 x 40 concurrent single-record
    writes is its own transaction and its own version; a reader on a third store finds
    every record at the version it reports."""
    a, b, reader = reopen(), reopen(), reopen()
    for store in (a, b, reader):
        await store.open()

    async def writer(store, w: int) -> None:
        for i in range(40):
            await store.put([rec("u", w * 100 + i)])

    await asyncio.wait_for(asyncio.gather(writer(a, 1), writer(b, 2)), 60)
    assert await reader.version("u") == 80
    found = await entries(reader, "u", -1)
    assert len(found) == 80
    assert sorted(found.values()) == list(range(1, 81))


async def test_a_write_of_empty_puts_changes_nothing(store):
    await store.put([rec("u", 1)])
    assert await store.write([Op("put", ([],)), Op("put", ([],))]) == [0, 0]
    assert await store.version("u") == 1
