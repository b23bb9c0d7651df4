"""Text search over memory records, per user: the seam the memory service calls (SPEC ME-2).

Each user has an index of their own (bm25.py: BM25 on an incremental inverted index); users share
nothing, not even term statistics, so a search never sees another user's records. Scores are
shares of the best hit (best = 1.0), ready to be multiplied by decay (ME-7). An optional dense
channel (dense.py, extra `embeddings`) adds sentence-embedding similarity on top.

Conversation turns (kind "turn" with a session) are read in their context: a turn's document is
its own terms plus those of the turns up to two places before and after it in the same session
(ordered by created_at, then insertion), at weights 0.5 and 0.25. Replies like "I went there
yesterday" then match questions about what "there" was; a turn's session and speaker weigh in
too (turns.py). LoCoMo evidence recall@10 on conversations 4-5, held out from the tuning on 1-3:
0.716 without the context, 0.775 with everything (bench/locomo.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from nerve.memory.bm25 import K1, B, UserIndex
from nerve.memory.model import Indexed

if TYPE_CHECKING:
    from nerve.memory.dense import DenseIndex

__all__ = ["SearchIndex"]

CONTEXT = (0.5, 0.25)  # weight of the turns 1 and 2 places away
MAX_QUERY_CHARS = 10_000  # a longer query is cut: tokenizing it would cost more than it adds


class SearchIndex:
    """In-memory lexical index over records, per user (isolation is absolute: a search never sees
    another user's records)."""

    def __init__(
        self,
        *,
        k1: float = K1,
        b: float = B,
        context: tuple[float, ...] = CONTEXT,
        dense: DenseIndex | None = None,
    ) -> None:
        """`dense` (nerve.memory.dense, extra `embeddings`) adds a meaning channel to search."""
        self._k1, self._b, self._context = k1, b, context
        self._dense = dense
        self._users: dict[str, UserIndex] = {}
        self._owner: dict[str, str] = {}  # record id -> user id

    def add(self, records: Iterable[Indexed]) -> None:
        """Add records; one whose id is already indexed is replaced (within `records`, the last
        of an id wins)."""
        latest = list({record.id: record for record in records}.values())
        if self._dense is not None:
            self._dense.add(latest)
        by_user: dict[str, list[Indexed]] = {}
        for record in latest:
            owner = self._owner.get(record.id)
            if owner is not None:
                self._users[owner].remove(record.id)
            by_user.setdefault(record.user_id, []).append(record)
            self._owner[record.id] = record.user_id
        for user_id, mine in by_user.items():
            user = self._users.get(user_id)
            if user is None:
                user = self._users[user_id] = UserIndex(self._k1, self._b, self._context)
            if len(mine) == 1:
                user.add(mine[0])
            else:
                user.extend(mine)

    def remove(self, ids: Iterable[str]) -> None:
        ids = list(ids)
        if self._dense is not None:
            self._dense.remove(ids)
        for record_id in ids:
            owner = self._owner.pop(record_id, None)
            if owner is not None:
                self._users[owner].remove(record_id)

    def remove_user(self, user_id: str) -> None:
        if self._dense is not None:
            self._dense.remove_user(user_id)
        user = self._users.pop(user_id, None)
        if user is not None:
            for record_id in user.ids():
                del self._owner[record_id]

    def search(
        self,
        user_id: str,
        query: str,
        k: int,
        *,
        allowed: Callable[[str], bool] | None = None,
    ) -> list[tuple[str, float]]:
        """The user's `k` best records for `query`, best first, as (id, score); the best scores
        1.0 and the others their share of it. `allowed` filters ids; an empty query or one with
        no known word finds nothing."""
        user = self._users.get(user_id)
        if user is None or k <= 0 or not isinstance(query, str):
            return []
        query = query[:MAX_QUERY_CHARS]
        if self._dense is None:
            return user.search(query, k, allowed)
        lexical = user.search(query, max(k, 100), allowed)
        return self._dense.fuse(user_id, query, lexical, k, allowed)

    def size(self, user_id: str) -> int:
        """How many of the user's records are indexed."""
        user = self._users.get(user_id)
        return len(user.slot_of) if user is not None else 0

    def __len__(self) -> int:
        return len(self._owner)
