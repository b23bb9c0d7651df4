"""What the WAL holds (ME-8): the store's write operations as frames, and how a batch of them
is applied to a store exactly once, even when applying it is interrupted and run again.

Every `MemoryStore` write is an `Op`, logged as orjson of its arguments (records and fact
changes as their dataclass fields, so they round-trip exactly). Puts, deletes and summaries
replace or remove, so running them twice changes nothing. Two ops add: `touch` (access_count
+= 1) and `put_fact` (a history row). Before a batch holding either is first applied, WalStore
logs a marker with `outcomes`: the absolute (accessed_at, access_count) each touch leaves on each
record. Run again (`again=True`), a touch sets those values on the record as it then is (any
later put in the batch is run again after it), and a fact change already in the history is not
appended a second time.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any, Protocol

import orjson

from nerve.memory.model import FactChange, Record
from nerve.memory.ops import Op
from nerve.memory.store import StoreReads, StoreWrites

__all__ = [
    "ADDITIVE",
    "MARKER",
    "Op",
    "ReadWrite",
    "Touched",
    "apply",
    "decode",
    "encode",
    "encode_marker",
    "outcomes",
]

MARKER = "applying"
ADDITIVE = ("touch", "put_fact")
Touched = dict[int, list[tuple[str, float, int]]]  # touch index -> (id, accessed_at, count)


class ReadWrite(StoreReads, StoreWrites, Protocol):
    """What replaying a segment needs of the store behind the WAL."""


def encode(op: Op) -> bytes:
    a = op.args
    match op.kind:
        case "put":
            body = {"records": a[0]}
        case "delete" | "delete_user":
            body = {"arg": a[0]}
        case "touch":
            body = {"ids": a[0], "at": a[1]}
        case "put_fact":
            body = {"record": a[0], "change": a[1]}
        case _:
            body = {"ids": a[0], "summary": a[1]}
    return orjson.dumps({"op": op.kind, **body})


def encode_marker(touched: Touched) -> bytes:
    return orjson.dumps({"op": MARKER, "touched": list(touched.items())})


def _record(fields: dict[str, Any]) -> Record:
    return Record(**fields)


def decode(payload: bytes) -> Op | Touched:
    """An op, or a marker's outcomes."""
    raw = orjson.loads(payload)
    kind, rec = raw["op"], _record
    if kind == MARKER:
        return {n: [(i, at, count) for i, at, count in found] for n, found in raw["touched"]}
    if kind == "put":
        return Op(kind, ([rec(r) for r in raw["records"]],))
    if kind in ("delete", "delete_user"):
        return Op(kind, (raw["arg"],))
    if kind == "touch":
        return Op(kind, (raw["ids"], raw["at"]))
    if kind == "put_fact":
        return Op(kind, (rec(raw["record"]), FactChange(**raw["change"])))
    if kind == "replace_with_summary":
        return Op(kind, (raw["ids"], rec(raw["summary"])))
    raise ValueError(f"unknown WAL operation {kind!r}")


async def outcomes(store: StoreReads, ops: list[Op]) -> Touched:
    """What each touch in `ops` (by index) leaves on each record it finds: the store's state of
    the touched ids, then `ops` played over it in order as the store plays them."""
    ids = {i for op in ops if op.kind == "touch" for i in op.args[0]}
    state = {r.id: r for r in await store.get(list(ids))} if ids else {}
    found: Touched = {}
    for n, op in enumerate(ops):
        kind, a = op.kind, op.args
        gone: Iterable[str] = ()
        put: list[Record] = []
        if kind == "put":
            put = a[0]
        elif kind == "delete":
            gone = a[0]
        elif kind == "delete_user":
            gone = [i for i, r in state.items() if r.user_id == a[0]]
        elif kind == "put_fact":
            put = [a[0]]
        elif kind == "replace_with_summary":
            gone, put = a[0], [a[1]]  # deleted first: a summary among delete_ids survives
        elif kind == "touch":
            touched = []
            for i in dict.fromkeys(a[0]):
                if (r := state.get(i)) is not None:
                    state[i] = r = replace(r, accessed_at=a[1], access_count=r.access_count + 1)
                    touched.append((i, r.accessed_at, r.access_count))
            found[n] = touched
        for i in gone:
            state.pop(i, None)
        state.update((r.id, r) for r in put if r.id in ids)
    return found


async def _put(store: StoreWrites, puts: list[Record]) -> None:
    if puts:
        await store.put(list({r.id: r for r in puts}.values()))
        puts.clear()


async def apply(store: ReadWrite, ops: list[Op], *, again: bool, touched: Touched) -> None:
    """Run `ops` on `store` in order, consecutive puts merged into one transaction. `again`:
    some prefix of `ops` may have been applied already; `touched` holds the marker's outcomes."""
    puts: list[Record] = []
    for n, op in enumerate(ops):
        kind, a = op.kind, op.args
        if kind == "put":
            puts += a[0]
            continue
        if again and kind == "touch":
            await _put(store, puts)
            wanted = {i: (at, count) for i, at, count in touched.get(n, [])}
            for r in await store.get(list(wanted)):
                at, count = wanted[r.id]
                puts.append(replace(r, accessed_at=at, access_count=count))
            continue
        if (
            again
            and kind == "put_fact"
            and a[1] in await store.fact_history(a[1].user_id, a[1].entity, a[1].attribute)
        ):
            puts.append(a[0])  # applied before: its change is in the history already
            continue
        await _put(store, puts)
        if kind == "delete":
            op.count = await store.delete(a[0])
        elif kind == "delete_user":
            op.count = await store.delete_user(a[0])
        elif kind == "touch":
            await store.touch(a[0], a[1])
        elif kind == "put_fact":
            await store.put_fact(a[0], a[1])
        elif kind == "replace_with_summary":
            await store.replace_with_summary(a[0], a[1])
    await _put(store, puts)
