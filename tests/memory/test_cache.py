"""Search answers as if there were no cache (SPEC ME-2, DESIGN "State and scale"), on SQLite and
PostgreSQL. Two `Memory` objects on two connections to one database stand for two processes here;
tests/test_one_nerve.py runs the same with real processes."""

from __future__ import annotations

import asyncio

import pytest

from nerve.memory.cache import SearchCache
from nerve.memory.codec import TOMBSTONE_SECONDS
from nerve.memory.groupcommit import GroupCommit
from nerve.memory.service import Memory
from tests.memory.factories import rec


@pytest.fixture
def make_memory(reopen, closing):
    async def make(**options) -> Memory:
        memory = Memory(GroupCommit(reopen()), **options)
        await memory.open()
        closing.push_async_callback(memory.close)
        return memory

    return make


async def found(memory: Memory, query: str, user: str = "asha") -> list[str]:
    return [str(x.record.data.get("text")) for x in await memory.recall(user, query=query)]


async def store(memory: Memory, text: str, user: str = "asha") -> str:
    stored = await memory.store_memory(
        user, tier="semantic", intent="note", data={"text": text}, importance=0.8
    )
    assert stored.id is not None
    return stored.id


async def test_a_write_by_another_process_is_found_by_the_next_search(make_memory):
    a, b = await make_memory(), await make_memory()
    await store(a, "prefers replies in Tamil")
    assert await found(b, "tamil") == ["prefers replies in Tamil"]  # b's first search: a load
    await store(a, "the staging database is called kestrel")
    assert await found(b, "kestrel") == ["the staging database is called kestrel"]  # caught up


async def test_a_deletion_by_another_process_disappears_from_the_next_search(make_memory):
    a, b = await make_memory(), await make_memory()
    doomed = await store(a, "the release train leaves on fridays")
    await store(a, "the release checklist lives in the wiki")
    assert len(await found(b, "release")) == 2
    assert await a.forget([doomed]) == 1
    assert await found(b, "release") == ["the release checklist lives in the wiki"]
    assert await found(b, "fridays") == []


async def test_forgetting_a_user_elsewhere_empties_their_search_and_they_can_start_again(
    make_memory,
):
    a, b = await make_memory(), await make_memory()
    await store(a, "likes green tea")
    assert await found(b, "tea") == ["likes green tea"]
    await a.forget_user("asha")
    assert await found(b, "tea") == []
    await store(a, "likes black tea now")
    assert await found(b, "tea") == ["likes black tea now"]


async def test_a_record_rewritten_elsewhere_is_found_by_its_new_words_only(make_memory):
    a, b = await make_memory(), await make_memory()
    await a.store_fact("asha", "Asha", "city", "Pune", 0.9)
    assert [x.record.data["value"] for x in await b.recall("asha", query="pune")] == ["Pune"]
    await a.store_fact("asha", "Asha", "city", "Chennai", 0.9)
    assert await b.recall("asha", query="pune") == []
    assert [x.record.data["value"] for x in await b.recall("asha", query="chennai")] == ["Chennai"]


async def test_nothing_is_read_at_open_and_an_unchanged_user_is_not_reloaded(make_memory):
    a = await make_memory()
    await store(a, "one")
    b = await make_memory()
    assert len(b.cache) == 0 and b.cache.loads == 0
    await found(b, "one")
    await found(b, "one")
    assert b.cache.loads == 1  # the second search only read the version
    await store(a, "two one")
    assert len(await found(b, "one")) == 2
    assert b.cache.loads == 1  # caught up from the change, not reloaded


async def test_users_never_see_each_others_records(make_memory):
    a, b = await make_memory(), await make_memory()
    await store(a, "secret plan alpha", user="asha")
    await store(a, "secret plan beta", user="ravi")
    assert await found(b, "secret plan", user="ravi") == ["secret plan beta"]
    assert await found(b, "secret plan", user="asha") == ["secret plan alpha"]


async def test_the_cache_holds_at_most_its_records_dropping_the_least_recently_searched(reopen):
    store_ = GroupCommit(reopen())
    await store_.open()
    for user in ("u1", "u2", "u3"):
        await store_.put([rec(user, n) for n in range(400)])
    cache = SearchCache(store_, max_records=1000)
    for user in ("u1", "u2", "u3"):
        assert len(await cache.search(user, "note", 5)) == 5
    assert len(cache) == 800  # u1 went when u3 came
    assert cache.index.size("u1") == 0
    await cache.search("u1", "note", 5)  # loaded again on demand
    assert cache.loads == 4 and len(cache) == 800
    await store_.close()


async def test_one_user_larger_than_the_cache_is_still_searched(reopen):
    store_ = GroupCommit(reopen())
    await store_.open()
    await store_.put([rec("big", n) for n in range(1500)])
    cache = SearchCache(store_, max_records=1000)
    assert len(await cache.search("big", "note", 3)) == 3
    await store_.close()


async def test_a_cache_unvalidated_longer_than_tombstones_are_kept_is_rebuilt(reopen):
    now = [0.0]
    store_ = GroupCommit(reopen())
    await store_.open()
    await store_.put([rec("u", 1)])
    cache = SearchCache(store_, clock=lambda: now[0])
    await cache.search("u", "note", 5)
    await store_.put([rec("u", 2)])
    now[0] += TOMBSTONE_SECONDS / 2 - 1
    await cache.search("u", "note", 5)
    assert cache.loads == 1  # caught up: the tombstones still tell
    await store_.put([rec("u", 3)])
    now[0] += TOMBSTONE_SECONDS / 2 + 1
    assert len(await cache.search("u", "note", 5)) == 3
    assert cache.loads == 2  # too long unproven: rebuilt from the store
    await store_.close()


async def test_a_user_is_not_evicted_while_their_index_catches_up(reopen):
    """A search loading another user must not drop an index that is half way through catching
    up: it would then be held as fresh with only the latest changes in it."""
    gate, waiting = asyncio.Event(), asyncio.Event()

    class Paused(GroupCommit):  # the real store, with one read held back until told
        async def deleted(self, user_id, since):
            if user_id == "a":
                waiting.set()
                await gate.wait()
            return await super().deleted(user_id, since)

    store_ = Paused(reopen())
    await store_.open()
    await store_.put([rec("a", n) for n in range(600)])
    await store_.put([rec("b", n) for n in range(600)])
    cache = SearchCache(store_, max_records=1000)
    await cache.search("a", "note", 5)
    await store_.put([rec("a", 600)])  # a's index must now catch up on one change
    catching_up = asyncio.create_task(cache.search("a", "note", 5))
    await waiting.wait()
    await cache.search("b", "note", 5)  # 1,200 records held: over the cap, "a" is the oldest
    gate.set()
    await catching_up
    assert cache.index.size("a") == 601  # all of it, not the one change alone
    await store_.close()
