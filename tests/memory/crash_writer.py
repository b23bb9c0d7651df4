"""The process test_wal.py kills (ME-8): concurrent writers on a WalStore, one line per ack.

    python -m tests.memory.crash_writer DIR [--writers 32] [--flush-records 1000]
                                            [--die-after-store-writes K]

Opens a WalStore (WAL at DIR/memory.wal, key from $NERVE_WAL_KEY when set) over the real
SQLiteStore at DIR/memory.db (or, without it, the file-backed test store at DIR/memory.json) and
runs writers that each loop: put a record, touch every third one then and again 12 puts later
(by then it is in the store, so a touch applied twice would show), put a fact every tenth time,
delete an earlier record every 25th. After each acknowledged write it prints one line,
flushed before the next write starts:

    P <id>          put acknowledged            T <id> <k>   k-th touch acknowledged
    F <writer> <n>  fact value n acknowledged   d <id> / D <id>  delete started / acknowledged

Every value is derived from (writer, n), so the test knows exactly what each record must hold.
`--die-after-store-writes K` SIGKILLs the process itself right after the store committed its
K-th write, i.e. in the middle of applying a batch.

`run` starts it (and kills it after n acks); `check_survivors` reopens what it left as nerve
would and checks every acknowledged write is there exactly once and everything there is exact.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import os
import signal
import sqlite3
import sys
from collections import defaultdict
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from nerve.memory.model import FactChange, Record, fact_id
from nerve.memory.store import MemoryStore, Query
from nerve.memory.wal import WalStore, WriteAheadLog

ROOT = Path(__file__).resolve().parents[2]
BASE = 1_750_000_000.0
TOUCH_BASE = 1_760_000_000.0
TOUCHES = 2
LATER = 12  # iterations between a record's two touches


def record_id(w: int, n: int) -> str:
    return f"r{w:03d}-{n:07d}"


def expected_record(w: int, n: int) -> Record:
    """What writer w's n-th put holds (before any touch)."""
    return Record.make(
        id=record_id(w, n),
        user_id=f"user{w % 4}",
        tier="episodic",
        kind="event",
        intent="crash_test",
        language="ta",
        session_id=f"s{w}",
        data={
            "w": w,
            "n": n,
            "text": f"writer {w} wrote {n}: வணக்கம் ✓",
            "pad": "x" * (n % 97),
            "nested": {"list": [n, n / 7, None, True], "neg": -n},
        },
        importance=0.4 + (n % 60) / 100,
        created_at=BASE + n + w / 1000,
    )


def fact(w: int, n: int) -> tuple[Record, FactChange]:
    user, entity, attribute = f"user{w % 4}", f"writer{w}", "progress"
    at = BASE + n + w / 1000
    record = Record.make(
        id=fact_id(user, entity, attribute),
        user_id=user,
        tier="semantic",
        kind="fact",
        intent="fact",
        data={"entity": entity, "attribute": attribute, "value": n},
        importance=0.8,
        created_at=at,
    )
    return record, FactChange(user, entity, attribute, str(n), f"s{w}", at)


def open_store(directory: Path) -> tuple[str, MemoryStore]:
    """The real SQLite store when it exists, else the file-backed test store."""
    try:
        from nerve.memory.sqlite import SQLiteStore
    except ImportError:
        from tests.memory.memstore import MemStore

        return "memstore", MemStore(directory / "memory.json")
    return "sqlite", SQLiteStore(directory / "memory.db")


class DiesAfter:
    """`store`, except the process dies (SIGKILL) right after its `writes`-th write commits."""

    def __init__(self, store: MemoryStore, writes: int) -> None:
        self.inner, self.left = store, writes

    def _count(self) -> None:
        self.left -= 1
        if self.left == 0:
            os.kill(os.getpid(), signal.SIGKILL)

    async def _write(self, name: str, *args: Any) -> Any:
        result = await getattr(self.inner, name)(*args)
        self._count()
        return result

    async def open(self) -> None:
        await self.inner.open()

    async def close(self) -> None:
        await self.inner.close()

    async def put(self, records: Sequence[Record]) -> None:
        await self._write("put", records)

    async def touch(self, ids: Sequence[str], at: float) -> None:
        await self._write("touch", ids, at)

    async def delete(self, ids: Sequence[str]) -> int:
        return int(await self._write("delete", ids))

    async def delete_user(self, user_id: str) -> int:
        return int(await self._write("delete_user", user_id))

    async def put_fact(self, record: Record, change: FactChange) -> None:
        await self._write("put_fact", record, change)

    async def replace_with_summary(self, delete_ids: Sequence[str], summary: Record) -> None:
        await self._write("replace_with_summary", delete_ids, summary)

    async def get(self, ids: Sequence[str]) -> list[Record]:
        return await self.inner.get(ids)

    async def query(self, query: Query) -> list[Record]:
        return await self.inner.query(query)

    async def fact_history(self, user_id: str, entity: str, attribute: str) -> list[FactChange]:
        return await self.inner.fact_history(user_id, entity, attribute)

    def scan(self, user_id: str | None = None) -> AsyncIterator[Record]:
        return self.inner.scan(user_id)


def emit(line: str) -> None:
    os.write(1, f"{line}\n".encode())  # one write per line: the reader never sees half of one


async def writer(store: WalStore, w: int, limit: int) -> None:
    for n in range(limit):
        record = expected_record(w, n)
        await store.put([record])
        emit(f"P {record.id}")
        for m, k in ((n, 1), (n - LATER, 2)):  # the second touch lands in a later batch
            if m >= 0 and m % 3 == 0:
                await store.touch([record_id(w, m)], TOUCH_BASE + k)
                emit(f"T {record_id(w, m)} {k}")
        if n % 10 == 0:
            await store.put_fact(*fact(w, n))
            emit(f"F {w} {n}")
        if n % 25 == 24:
            victim = record_id(w, n - 1)
            emit(f"d {victim}")
            await store.delete([victim])
            emit(f"D {victim}")


async def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("directory", type=Path)
    parser.add_argument("--writers", type=int, default=32)
    parser.add_argument("--limit", type=int, default=2000, help="puts per writer, then exit")
    parser.add_argument("--die-after-store-writes", type=int, default=0)
    parser.add_argument("--flush-records", type=int, default=1000)
    args = parser.parse_args(argv)
    raw_key = os.environ.get("NERVE_WAL_KEY")
    key = base64.b64decode(raw_key) if raw_key else None
    _, store = open_store(args.directory)
    if args.die_after_store_writes:
        store = DiesAfter(store, args.die_after_store_writes)
    wal = WriteAheadLog(args.directory / "memory.wal", key=key)
    wal_store = WalStore(store, wal, flush_records=args.flush_records)
    await wal_store.open()
    await asyncio.gather(*(writer(wal_store, w, args.limit) for w in range(args.writers)))
    await wal_store.close()


# -- the test's side: run it, kill it, check what it left --------------------------------


async def run(
    directory: Path, *args: str, kill_after: int = 0, key: bytes | None = None
) -> tuple[list[str], int]:
    """Run crash_writer until it dies, or SIGKILL it right after `kill_after` acknowledgements;
    (every complete line it printed, its exit code)."""
    env = dict(os.environ, NERVE_WAL_KEY=base64.b64encode(key).decode() if key else "")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.memory.crash_writer", str(directory), *args,
        cwd=ROOT, env=env, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None
    lines: list[bytes] = []
    acks = 0
    async with asyncio.timeout(120):
        while not kill_after or acks < kill_after:
            line = await proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            acks += not line.startswith(b"d ")  # "d" announces a delete; the rest are acks
        if kill_after:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
        lines += (await proc.stdout.read()).splitlines(keepends=True)
        code = await proc.wait()
    return [line.decode().rstrip("\n") for line in lines if line.endswith(b"\n")], code


def wal_files(directory: Path) -> list[str]:
    return [p.name for p in directory.iterdir() if p.name.startswith("memory.wal")]


async def check_survivors(directory: Path, lines: list[str], key: bytes | None = None) -> int:
    """Reopen the store and WAL as nerve would; every acknowledged write is there exactly once,
    and everything there decodes and is exactly what some writer wrote. Returns ops replayed."""
    acked, deleting, deleted = set(), set(), set()
    touches: dict[str, int] = defaultdict(int)
    facts: dict[int, list[int]] = defaultdict(list)
    for line in lines:
        kind, *rest = line.split()
        if kind == "P":
            acked.add(rest[0])
        elif kind == "T":
            touches[rest[0]] = int(rest[1])
        elif kind == "F":
            facts[int(rest[0])].append(int(rest[1]))
        else:
            (deleting if kind == "d" else deleted).add(rest[0])
    backend, inner = open_store(directory)
    store = WalStore(inner, WriteAheadLog(directory / "memory.wal", key=key))
    await store.open()
    stored = {r.id: r async for r in store.scan()}
    assert not acked - deleting - stored.keys(), "acknowledged puts are missing"
    assert not deleted & stored.keys(), "acknowledged deletes came back"
    writers = {int(i[1:4]) for i in acked}
    for record in stored.values():
        if record.kind == "event":
            w, n = int(record.id[1:4]), int(record.id[5:])
            assert replace(record, accessed_at=0.0, access_count=0) == expected_record(w, n)
            count, done = record.access_count, touches.get(record.id, 0)
            assert done <= count <= (min(done + 1, TOUCHES) if n % 3 == 0 else 0), record.id
            assert record.accessed_at == (TOUCH_BASE + count if count else 0.0), "touch twice"
    for w in writers:
        done = facts.get(w, [])
        history = await store.fact_history(f"user{w % 4}", f"writer{w}", "progress")
        values = [int(change.value) for change in history]
        assert values in (done, [*done, done[-1] + 10 if done else 0]), f"writer {w}'s facts"
        if values:
            (record,) = await store.get([fact(w, 0)[0].id])
            assert record.data["value"] == values[-1]
    replayed = store.replayed
    await store.close()
    assert not wal_files(directory), "close must leave no WAL behind"
    if backend == "sqlite":
        with contextlib.closing(sqlite3.connect(directory / "memory.db")) as db:
            assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    return replayed


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
