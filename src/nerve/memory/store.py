"""The storage seam: one protocol, two backends (SQLite default, PostgreSQL at scale).

`MemoryStore` is three smaller seams and a lifecycle: `StoreReads` (get, query, scan, a fact's
history), `StoreWrites` (every write, each an `Op`) and `ChangeFeed` (versions, changes,
deletions: how another process's cache catches up). A part that needs one takes only that one
(the record cache takes a `ChangeFeed`, the WAL replay a reader and writer).

Every method is async; a backend owns its connections and its schema (migrations as an ordered
list, applied by `open`). Every write is an `Op` (ops.py); `write(ops)` runs several in one
transaction, and the named write methods are one op each. Both backends run the same test suite
(tests/memory/test_store.py is parametrized over them).

Versions (migration 4): each write transaction raises by one the version of every user whose
records it writes or deletes, stamps the records it writes with it, and leaves a tombstone for
each record it deletes. `version`, `changed` and `deleted` let any process bring a cache of one
user's records up to date with the store, whoever wrote (nerve.memory.cache).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import NamedTuple, Protocol, runtime_checkable

from nerve.memory.model import Entry, FactChange, Kind, Record, Tier
from nerve.memory.ops import Op

__all__ = [
    "ChangeFeed",
    "Deleted",
    "FactHistoryStore",
    "MemoryStore",
    "Query",
    "StoreReads",
    "StoreWrites",
]


class Deleted(NamedTuple):
    """Deletions after a version: the ids, and whether all of the user's records went."""

    ids: list[str]
    everything: bool


class Query:
    """Filters for `MemoryStore.query`; None means any. Results are newest first."""

    __slots__ = ("intent", "kind", "limit", "session_id", "since", "tier", "until", "user_id")

    def __init__(
        self,
        user_id: str,
        *,
        intent: str | None = None,
        tier: Tier | None = None,
        kind: Kind | None = None,
        session_id: str | None = None,
        since: float | None = None,
        until: float | None = None,
        limit: int | None = None,
    ) -> None:
        self.user_id = user_id
        self.intent = intent
        self.tier = tier
        self.kind = kind
        self.session_id = session_id
        self.since = since
        self.until = until
        self.limit = limit


class StoreReads(Protocol):
    async def get(self, ids: Sequence[str]) -> list[Record]:
        """The records that exist among `ids`, in no particular order."""

    async def query(self, query: Query) -> list[Record]: ...

    async def fact_history(self, user_id: str, entity: str, attribute: str) -> list[FactChange]:
        """Oldest first."""

    def scan(self, user_id: str | None = None) -> AsyncIterator[Record]:
        """Every record (of one user, or all), in keyset pages (export, migrations)."""
        ...


class StoreWrites(Protocol):
    async def write(self, ops: Sequence[Op]) -> list[int]:
        """Run `ops` in one transaction, in order; what each returned (delete counts, else 0).
        Nothing is written when one of them fails."""

    async def put(self, records: Sequence[Record]) -> None:
        """Insert or replace (by id) all records in one transaction."""

    async def touch(self, ids: Sequence[str], at: float) -> None:
        """A recall happened: accessed_at = at, access_count += 1."""

    async def delete(self, ids: Sequence[str]) -> int:
        """Delete by id; returns how many existed."""

    async def delete_user(self, user_id: str) -> int:
        """Forget everything about a user (records and fact history); returns records deleted."""

    async def put_fact(self, record: Record, change: FactChange) -> None:
        """Upsert the fact record (one per user/entity/attribute) and append to its history,
        in one transaction."""

    async def replace_with_summary(self, delete_ids: Sequence[str], summary: Record) -> None:
        """Store `summary` and delete `delete_ids` in one transaction (ME-9: nothing is lost
        when either half fails)."""


class ChangeFeed(Protocol):
    async def version(self, user_id: str) -> int:
        """The user's change version: 0 until their records are first written."""

    def changed(self, user_id: str, since: int) -> AsyncIterator[Entry]:
        """The user's records last written at a version after `since` (-1: every record), as
        index entries, in keyset pages."""
        ...

    async def deleted(self, user_id: str, since: int) -> Deleted:
        """What was deleted of the user's records at versions after `since`, as far as the
        tombstones still tell (they are kept `codec.TOMBSTONE_SECONDS`)."""


class MemoryStore(StoreReads, StoreWrites, ChangeFeed, Protocol):
    async def open(self) -> None:
        """Connect and apply pending migrations."""

    async def close(self) -> None: ...


@runtime_checkable
class FactHistoryStore(Protocol):
    """Fact history in bulk, beside `MemoryStore` (export and import: nerve.memory.transfer).
    Both backends implement it (history.py); the wrappers in front of them (group commit, the
    WAL) need not, as only `nerve memory export|import` use it, on the backend itself."""

    def scan_fact_history(self, user_id: str | None = None) -> AsyncIterator[FactChange]:
        """Every fact change (of one user, or all) in the order appended, in keyset pages."""
        ...

    async def add_fact_history(self, changes: Sequence[FactChange]) -> int:
        """Append, in order and in one transaction, each change the history does not hold yet
        (same user, entity and attribute as `fact_history` matches them, value, session and
        time); how many were appended."""
