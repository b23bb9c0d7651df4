"""Search that answers as if it had no cache (SPEC ME-2, DESIGN "State and scale").

The store is the truth; this process keeps, for the users it searched lately, their records in a
`SearchIndex` (BM25 on postings: far faster than ranking in SQL) and proves each one fresh before
it answers. Every write, by any process, raises the written user's version in the store
(store.py). Before a search the user's version is read (one indexed lookup); if it moved, the
index catches up on what changed since (`changed`, `deleted`) and only then answers. So a record
another process acknowledged is found, and one it deleted is gone, on the very next search.

Nothing is read at start-up: a user's index is loaded on their first search. The cache holds at
most `max_records` records (the least recently searched users go first; one user larger than
that is still served, alone). An index left unvalidated for longer than the store keeps
tombstones could miss a deletion, so it is rebuilt instead of caught up.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from nerve.memory.codec import TOMBSTONE_SECONDS
from nerve.memory.index import SearchIndex
from nerve.memory.model import Entry
from nerve.memory.store import ChangeFeed

__all__ = ["SearchCache"]

_LOAD_BATCH = 5000  # entries added to the index at a time while loading a user
_LOCKS = 64  # refreshes of one user run one at a time; two users may share a lock


@dataclass(slots=True)
class _Held:
    version: int  # the index holds every write of this user up to this version
    checked: float  # when that was last proven (monotonic)
    size: int


class SearchCache:
    def __init__(
        self,
        store: ChangeFeed,
        index: SearchIndex | None = None,
        *,
        max_records: int = 500_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.index = index or SearchIndex()
        self.max_records = max_records
        self.clock = clock
        self.loads = 0  # users loaded whole (first search, rebuilds): for tests and benches
        self._held: OrderedDict[str, _Held] = OrderedDict()  # least recently searched first
        self._total = 0  # records held
        self._locks = [asyncio.Lock() for _ in range(_LOCKS)]
        self._loading: set[str] = set()  # users whose refresh is under way: never evicted

    async def search(self, user_id: str, query: str, k: int) -> list[tuple[str, float]]:
        """The user's `k` best record ids for `query`, fresh as of this call (index.py)."""
        await self.refresh(user_id)
        return self.index.search(user_id, query, k)  # no await since the refresh: still fresh

    async def refresh(self, user_id: str) -> None:
        """Bring the user's index up to date with the store."""
        async with self._locks[hash(user_id) % _LOCKS]:
            self._loading.add(user_id)
            try:
                await self._refresh(user_id)
            finally:
                self._loading.discard(user_id)

    async def _refresh(self, user_id: str) -> None:
        now = self.clock()
        version = await self.store.version(user_id)
        held = self._held.get(user_id)
        if held is not None and held.version == version:
            held.checked = now
            self._held.move_to_end(user_id)
            return
        since = -1
        if held is not None and now - held.checked < TOMBSTONE_SECONDS / 2:
            since = held.version
            gone = await self.store.deleted(user_id, since)
            if gone.everything:
                since = -1
            else:
                self.index.remove(gone.ids)  # before the adds: a record written again returns
        if since < 0:
            self.forget(user_id)
            self.loads += 1
        batch: list[Entry] = []
        async for entry in self.store.changed(user_id, since):
            batch.append(entry)
            if len(batch) >= _LOAD_BATCH:
                self.index.add(batch)
                batch = []
        self.index.add(batch)
        size = self.index.size(user_id)
        old = self._held.pop(user_id, None)
        self._total += size - (old.size if old is not None else 0)
        self._held[user_id] = _Held(version, now, size)
        for other in list(self._held):  # the least recently searched go first
            if self._total <= self.max_records:
                break
            if other not in self._loading:  # evicted mid-load, it would be held incomplete
                self.forget(other)

    def forget(self, user_id: str) -> None:
        """Drop a user's index (it is loaded again on their next search)."""
        held = self._held.pop(user_id, None)
        if held is not None:
            self._total -= held.size
        self.index.remove_user(user_id)

    def __len__(self) -> int:
        """Records held, over every cached user."""
        return self._total
