"""A memory write as data: the one shape in which every write reaches a store (SPEC ME-2, ME-8).

Each `MemoryStore` write is an `Op`. A backend runs a list of them with `write(ops)`: in one
transaction, in order, returning what each returned (the delete counts). That one entry point is
what lets group commit (groupcommit.py) put the writes of many concurrent callers into one
transaction, and the WAL (wal/ops.py) log them. `Writes` gives a store the protocol's named write
methods on top of its `write`.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from nerve.memory.model import FactChange, Record

__all__ = [
    "KINDS",
    "Op",
    "Writes",
    "in_order",
    "known_users",
    "removed_ids",
]

KINDS = ("put", "delete", "delete_user", "touch", "put_fact", "replace_with_summary")


@dataclass(slots=True, eq=False)
class Op:
    kind: str  # one of KINDS
    args: tuple[Any, ...]
    count: int = 0  # what delete / delete_user returned once applied


def known_users(ops: Iterable[Op]) -> set[str]:
    """The users whose records `ops` write, as far as the ops themselves say (a delete by id
    names no user: the store looks its ids up)."""
    users: set[str] = set()
    for op in ops:
        if op.kind == "put":
            users.update(r.user_id for r in op.args[0])
        elif op.kind == "put_fact":
            users.add(op.args[0].user_id)
        elif op.kind == "replace_with_summary":
            users.add(op.args[1].user_id)
        elif op.kind == "delete_user":
            users.add(op.args[0])
    users.discard(None)  # type: ignore[arg-type,unused-ignore]  # a bad record fails its insert, not a sort
    return users


def removed_ids(ops: Iterable[Op]) -> list[str]:
    """The ids that `ops` delete one by one (whose owners the store must look up)."""
    return [i for op in ops if op.kind in ("delete", "replace_with_summary") for i in op.args[0]]


async def in_order(
    ops: Sequence[Op],
    put: Callable[[list[Record]], Awaitable[None]],
    run: Callable[[Op], Awaitable[int]],
) -> list[int]:
    """What a backend's `write` does inside its transaction: `ops` in order, each run of
    consecutive puts as one `put` (one statement: upserts, so the last of an id wins), every
    other op through `run`; the counts, one per op."""
    counts: list[int] = []
    puts: list[Record] = []
    for op in ops:
        if op.kind == "put":
            puts += op.args[0]
            counts.append(0)
            continue
        if puts:
            await put(puts)
            puts = []
        counts.append(await run(op))
    if puts:
        await put(puts)
    return counts


class Writes:
    """The named write methods of `MemoryStore`, each one op through `write`."""

    async def write(self, ops: Sequence[Op]) -> list[int]:
        raise NotImplementedError

    async def put(self, records: Sequence[Record]) -> None:
        if records:
            await self.write([Op("put", (list(records),))])

    async def delete(self, ids: Sequence[str]) -> int:
        return (await self.write([Op("delete", (list(ids),))]))[0] if ids else 0

    async def delete_user(self, user_id: str) -> int:
        return (await self.write([Op("delete_user", (user_id,))]))[0]

    async def touch(self, ids: Sequence[str], at: float) -> None:
        if not math.isfinite(at):  # refused even with nothing to touch, as before any write
            raise ValueError(f"touch at must be a finite number, not {at}")
        if ids:
            await self.write([Op("touch", (list(ids), at))])

    async def put_fact(self, record: Record, change: FactChange) -> None:
        await self.write([Op("put_fact", (record, change))])

    async def replace_with_summary(self, delete_ids: Sequence[str], summary: Record) -> None:
        await self.write([Op("replace_with_summary", (list(delete_ids), summary))])
