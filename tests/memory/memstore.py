"""A third `MemoryStore` backend, for tests only: dicts in memory (ME-8's tests run the WAL over
it and over SQLite).

It implements the whole protocol with the SQL backends' semantics (upsert by id, `updated_at`
defaulting to `created_at`, touch = accessed_at and access_count + 1, a summary among the ids it
replaces survives, fact history matched on trimmed, case-folded entity and attribute). With a
`path`, every write is one transaction: the whole state is written to a temporary file and
renamed over `path`, so a killed process leaves the last committed state, and `open` loads it.
For failure tests it can refuse writes after `writes_left` more of them (`StoreDown`, an outage)
and call `on_commit` after each committed write; `copy` is the committed state on its own.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import asdict, replace
from pathlib import Path

import orjson

from nerve.memory.model import FactChange, Record
from nerve.memory.store import Query

__all__ = ["MemStore", "StoreDown"]


class StoreDown(OSError):
    """An injected outage: the store refuses the write and changes nothing."""


def _key(change: FactChange) -> tuple[str, str, str]:
    return change.user_id, change.entity.strip().lower(), change.attribute.strip().lower()


class MemStore:
    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self.records: dict[str, Record] = {}
        self.history: list[FactChange] = []
        self.writes = 0  # committed write transactions
        self.writes_left: int | None = None  # None: no outage planned
        self.on_commit: Callable[[], None] | None = None

    def copy(self) -> MemStore:
        twin = MemStore()
        twin.records, twin.history = dict(self.records), list(self.history)
        return twin

    def _begin(self) -> None:
        if self.writes_left is not None:
            if self.writes_left <= 0:
                raise StoreDown("the store is down (injected)")
            self.writes_left -= 1

    async def open(self) -> None:
        if self.path is not None and self.path.exists():
            state = orjson.loads(self.path.read_bytes())
            self.records = {r["id"]: Record(**r) for r in state["records"]}
            self.history = [FactChange(**c) for c in state["history"]]

    async def close(self) -> None:
        pass

    def _commit(self) -> None:
        self.writes += 1
        if self.on_commit is not None:
            self.on_commit()
        if self.path is None:
            return
        state = {"records": list(self.records.values()), "history": self.history}
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_bytes(orjson.dumps(state))
        os.replace(tmp, self.path)

    def _put(self, records: Sequence[Record]) -> None:
        for record in records:
            self.records[record.id] = replace(
                record,
                updated_at=record.updated_at or record.created_at,
                importance=float(record.importance),
            )

    async def put(self, records: Sequence[Record]) -> None:
        if records:
            self._begin()
            self._put(records)
            self._commit()

    async def get(self, ids: Sequence[str]) -> list[Record]:
        return [self.records[i] for i in dict.fromkeys(ids) if i in self.records]

    async def query(self, query: Query) -> list[Record]:
        def keep(r: Record) -> bool:
            return (
                r.user_id == query.user_id
                and all(
                    value is None or getattr(r, name) == value
                    for name, value in (
                        ("intent", query.intent),
                        ("tier", query.tier),
                        ("kind", query.kind),
                        ("session_id", query.session_id),
                    )
                )
                and (query.since is None or r.created_at >= query.since)
                and (query.until is None or r.created_at < query.until)
            )

        found = sorted(
            (r for r in self.records.values() if keep(r)),
            key=lambda r: (r.created_at, r.id),
            reverse=True,
        )
        return found if query.limit is None else found[: query.limit]

    async def touch(self, ids: Sequence[str], at: float) -> None:
        self._begin()
        for i in dict.fromkeys(ids):
            if (r := self.records.get(i)) is not None:
                self.records[i] = replace(r, accessed_at=float(at), access_count=r.access_count + 1)
        self._commit()

    def _delete(self, ids: Sequence[str]) -> int:
        return sum(self.records.pop(i, None) is not None for i in dict.fromkeys(ids))

    async def delete(self, ids: Sequence[str]) -> int:
        self._begin()
        deleted = self._delete(ids)
        self._commit()
        return deleted

    async def delete_user(self, user_id: str) -> int:
        self._begin()
        deleted = self._delete([i for i, r in self.records.items() if r.user_id == user_id])
        self.history = [c for c in self.history if c.user_id != user_id]
        self._commit()
        return deleted

    async def put_fact(self, record: Record, change: FactChange) -> None:
        self._begin()
        self._put([record])
        self.history.append(change)
        self._commit()

    async def fact_history(self, user_id: str, entity: str, attribute: str) -> list[FactChange]:
        key = _key(FactChange(user_id, entity, attribute, "", None, 0.0))
        found = [c for c in self.history if _key(c) == key]
        return sorted(found, key=lambda c: c.changed_at)  # stable: insertion order breaks ties

    async def replace_with_summary(self, delete_ids: Sequence[str], summary: Record) -> None:
        self._begin()
        self._delete(delete_ids)
        self._put([summary])
        self._commit()

    async def scan(self, user_id: str | None = None) -> AsyncIterator[Record]:
        if user_id is None:
            chosen = sorted(self.records.values(), key=lambda r: r.id)
        else:
            mine = (r for r in self.records.values() if r.user_id == user_id)
            chosen = sorted(mine, key=lambda r: (r.created_at, r.id))
        for record in chosen:
            yield record

    def snapshot(self) -> dict[str, object]:
        """The state as plain data, for comparing two stores."""
        return {
            "records": sorted((asdict(r) for r in self.records.values()), key=lambda r: r["id"]),
            "history": [asdict(c) for c in self.history],
        }
