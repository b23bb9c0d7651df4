"""`FactHistoryStore` (history.py), run unchanged on SQLite and on PostgreSQL: the fact history
read and appended in bulk, as `nerve memory export|import` do (ME-5)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from nerve.memory.model import FactChange
from nerve.memory.store import FactHistoryStore
from tests.memory.factories import T0, fact


def change(user: str, value: str, at: float, entity: str = "alice") -> FactChange:
    return FactChange(user, entity, "city", value, "s1", at)


async def test_both_backends_are_fact_history_stores(store):
    assert isinstance(store, FactHistoryStore)


async def test_scan_fact_history_yields_every_change_in_the_order_appended(reopen):
    """Keyset pages by seq: a page boundary neither repeats nor drops a change; ties in
    changed_at keep their order of appending."""
    store = reopen(scan_batch=3)
    await store.open()
    appended = []
    for i in range(8):
        record, c = fact("u" if i % 2 else "v", "alice", "city", f"city {i}", T0 + 10 - i)
        await store.put_fact(record, c)
        appended.append(c)
    await store.put_fact(*fact("u", "alice", "city", "same time", T0))
    appended.append(fact("u", "alice", "city", "same time", T0)[1])
    assert [c async for c in store.scan_fact_history()] == appended
    assert [c async for c in store.scan_fact_history("u")] == [
        c for c in appended if c.user_id == "u"
    ]
    assert [c async for c in store.scan_fact_history("nobody")] == []


async def test_add_fact_history_appends_only_the_changes_not_there_yet(store):
    """Idempotent: the same changes twice are appended once; a change is the same when its
    user, entity and attribute (any case, trimmed), value, session and time are."""
    first = [change("u", "Chennai", T0), change("u", "Madurai", T0 + 1)]
    assert await store.add_fact_history(first) == 2
    assert await store.add_fact_history(first) == 0
    again = [
        change("u", "Chennai", T0, entity=" ALICE "),  # the same change, spelt otherwise
        replace(first[1], session_id=None),  # another session: another change
        change("u", "Chennai", T0 + 2),  # another time
        change("w", "Chennai", T0),  # another user
        change("u", "Chennai", T0 + 2),  # twice in one call: once
    ]
    assert await store.add_fact_history(again) == 3
    assert await store.add_fact_history([replace(first[1], session_id=None)]) == 0
    history = await store.fact_history("u", "alice", "city")
    assert history == [first[0], first[1], again[1], again[2]]
    assert await store.fact_history("w", "alice", "city") == [again[3]]


async def test_add_fact_history_keeps_the_given_order_for_equal_times(store):
    same = [change("u", f"value {i}", T0) for i in range(5)]
    assert await store.add_fact_history(same) == 5
    assert await store.fact_history("u", "alice", "city") == same


async def test_add_fact_history_writes_nothing_when_one_change_is_refused(store):
    """One transaction, and NUL is refused by both backends before anything is written."""
    with pytest.raises(ValueError, match="NUL"):
        await store.add_fact_history([change("u", "Chennai", T0), change("u", "Ma\x00durai", T0)])
    assert await store.fact_history("u", "alice", "city") == []
    assert await store.add_fact_history([]) == 0
