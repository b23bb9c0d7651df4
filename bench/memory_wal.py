"""Memory writes through the WAL (ME-8): acknowledged records/s by number of concurrent writers.

    .venv/bin/python bench/memory_wal.py [--runs 3] [--seconds 1.5] [--key]

Each writer puts one record at a time and waits for its acknowledgement. "WAL" is a WalStore
(fsync on, group commit) over the store; an ack there means the record is fsync'd in the WAL.
"direct" puts straight into the same store, one transaction per record. The store is the real
SQLiteStore (WAL journal, synchronous=NORMAL: a commit survives a killed process but is not
fsync'd) when it can be imported, else the in-memory test store; the output says which. Every
cell is the median of --runs runs on a fresh directory; a run lasts about --seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nerve.memory.model import Record  # noqa: E402
from nerve.memory.store import MemoryStore  # noqa: E402
from nerve.memory.wal import WalStore, WriteAheadLog  # noqa: E402

WRITERS = (1, 8, 64, 256)


def store_name() -> str:
    try:
        import nerve.memory.sqlite  # noqa: F401
    except ImportError:
        return "the in-memory test store (tests/memory/memstore.py): no SQLiteStore here"
    return "SQLiteStore (nerve.memory.sqlite)"


def make_store(directory: Path) -> MemoryStore:
    try:
        from nerve.memory.sqlite import SQLiteStore
    except ImportError:
        from tests.memory.memstore import MemStore

        return MemStore()
    return SQLiteStore(directory / "memory.db")


def record(w: int, n: int) -> Record:
    return Record.make(
        user_id=f"user{w % 16}", tier="episodic", intent="bench", kind="event",
        data={"w": w, "n": n, "text": f"writer {w} wrote record {n}", "tags": ["a", "b"]},
        importance=0.6,
    )  # fmt: skip


async def run(writers: int, seconds: float, wal: bool, key: bytes | None) -> tuple[float, float]:
    """(acknowledged records/s, records per fsync) for one run."""
    with tempfile.TemporaryDirectory() as tmp:
        inner = make_store(Path(tmp))
        log = WriteAheadLog(Path(tmp) / "memory.wal", key=key) if wal else None
        store: MemoryStore = WalStore(inner, log) if log is not None else inner
        await store.open()
        done = 0
        deadline = time.perf_counter() + seconds

        async def writer(w: int) -> None:
            nonlocal done
            n = 0
            while time.perf_counter() < deadline:
                await store.put([record(w, n)])
                n += 1
                done += 1

        start = time.perf_counter()
        await asyncio.gather(*(writer(w) for w in range(writers)))
        elapsed = time.perf_counter() - start
        per_sync = log.frames / max(log.syncs, 1) if log is not None else 0.0
        await store.close()
        return done / elapsed, per_sync


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=1.5)
    parser.add_argument("--key", action="store_true", help="encrypt the WAL (AES-GCM)")
    args = parser.parse_args()
    key = os.urandom(32) if args.key else None
    encryption = "AES-GCM" if key else "off"
    print(f"store: {store_name()}; WAL encryption: {encryption}; {os.cpu_count()} cores")
    print(f"median of {args.runs} runs of ~{args.seconds}s each\n")
    print(
        "| writers | WAL, fsync on (acks/s) | records per fsync | direct (acks/s) | WAL / direct |"
    )
    print("| ---: | ---: | ---: | ---: | ---: |")
    for writers in WRITERS:
        with_wal = [await run(writers, args.seconds, True, key) for _ in range(args.runs)]
        direct = [await run(writers, args.seconds, False, None) for _ in range(args.runs)]
        rate = statistics.median(r for r, _ in with_wal)
        batch = statistics.median(b for _, b in with_wal)
        plain = statistics.median(r for r, _ in direct)
        print(f"| {writers} | {rate:,.0f} | {batch:.1f} | {plain:,.0f} | {rate / plain:.2f}x |")


if __name__ == "__main__":
    asyncio.run(main())
