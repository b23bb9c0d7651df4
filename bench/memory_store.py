"""Memory store throughput and latency on both backends (SPEC ME-3).

    .venv/bin/python bench/memory_store.py [--sizes 10000,100000] [--runs 3] [--reps 300]
                                           [--backends sqlite,postgres]

Put throughput in records/s for batches of 1, 100 and 10,000 (median of --runs fresh stores),
then, with N records for one user (N in --sizes: 10 intents, 3 tiers, 5 kinds, sessions of 100
records, created one second apart), query latency p50/p95 in ms for the queries memory runs:
the newest 20, by intent, by tier and kind, one whole session, the newest 50 of a one-hour
window; and a full
`scan` of the user in records/s. SQLite writes to a temporary file; PostgreSQL
(NERVE_BENCH_POSTGRES_DSN, default postgresql://postgres@127.0.0.1:5432/test) to a schema made
for the run and dropped after.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import asyncpg

from nerve.memory.model import KINDS, TIERS, Record
from nerve.memory.postgres import PostgresStore
from nerve.memory.sqlite import SQLiteStore
from nerve.memory.store import MemoryStore, Query

DSN = os.environ.get("NERVE_BENCH_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test")
T0 = 1_800_000_000.0
USER = "bench-user"
PUTS = {1: 2_000, 100: 200, 10_000: 5}  # batch size -> how many batches per run


def make(i: int, user: str = USER) -> Record:
    return Record.make(
        user_id=user,
        tier=TIERS[i % 3],
        kind=KINDS[i % 5],
        intent=f"intent_{i % 10}",
        session_id=f"s{i // 100}",
        language="en",
        data={"text": f"record {i}: the user said something worth remembering", "n": i},
        importance=0.5 + (i % 50) / 100,
        created_at=T0 + i,
    )


@asynccontextmanager
async def fresh(backend: str) -> AsyncIterator[MemoryStore]:
    store: MemoryStore
    if backend == "sqlite":
        with tempfile.TemporaryDirectory() as tmp:
            store = SQLiteStore(Path(tmp) / "bench.db")
            await store.open()
            try:
                yield store
            finally:
                await store.close()
        return
    schema = f"nerve_bench_{uuid.uuid4().hex[:8]}"
    store = PostgresStore(DSN, schema=schema)
    await store.open()
    try:
        yield store
    finally:
        await store.close()
        conn = await asyncpg.connect(DSN)
        await conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
        await conn.close()


async def put_rate(backend: str, batch: int, runs: int) -> float:
    rates = []
    for _ in range(runs):
        async with fresh(backend) as store:
            batches = [[make(b * batch + i) for i in range(batch)] for b in range(PUTS[batch])]
            start = time.perf_counter()
            for records in batches:
                await store.put(records)
            rates.append(batch * len(batches) / (time.perf_counter() - start))
    return statistics.median(rates)


def window(k: int, n: int) -> Query:
    since = T0 + (k * 7919) % n
    return Query(USER, since=since, until=since + 3600, limit=50)


QUERIES: dict[str, Callable[[int, int], Query]] = {
    "newest 20": lambda k, n: Query(USER, limit=20),
    "intent, 20": lambda k, n: Query(USER, intent=f"intent_{k % 10}", limit=20),
    "tier+kind, 20": lambda k, n: Query(USER, tier=TIERS[k % 3], kind=KINDS[k % 5], limit=20),
    "one session (100)": lambda k, n: Query(USER, session_id=f"s{(k * 7919) % (n // 100)}"),
    "1 h window, 50": window,
}


async def query_latencies(store: MemoryStore, n: int, reps: int) -> dict[str, tuple[float, float]]:
    out = {}
    for name, build in QUERIES.items():
        for k in range(20):  # warm up caches and prepared statements
            await store.query(build(k, n))
        times = []
        for k in range(reps):
            start = time.perf_counter()
            await store.query(build(k, n))
            times.append((time.perf_counter() - start) * 1000)
        q = statistics.quantiles(times, n=20)
        out[name] = (statistics.median(times), q[18])
    return out


async def scan_rate(store: MemoryStore, n: int) -> float:
    start = time.perf_counter()
    count = sum([1 async for _ in store.scan(USER)])
    assert count == n, (count, n)
    return n / (time.perf_counter() - start)


async def reachable() -> bool:
    try:
        conn = await asyncpg.connect(DSN, timeout=5)
    except Exception:
        return False
    await conn.close()
    return True


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--reps", type=int, default=300, help="timed queries per query kind")
    parser.add_argument("--backends", default="sqlite,postgres")
    args = parser.parse_args()
    backends = args.backends.split(",")
    if "postgres" in backends and not await reachable():
        print(f"PostgreSQL is not reachable ({DSN.split('@')[-1]}): SQLite only\n")
        backends.remove("postgres")
    sizes = [int(s) for s in args.sizes.split(",")]

    print(f"## put throughput, records/s (median of {args.runs} runs)\n")
    print("| batch | " + " | ".join(backends) + " |")
    print("|---:|" + "---:|" * len(backends))
    for batch in PUTS:
        rates = [await put_rate(b, batch, args.runs) for b in backends]
        print(f"| {batch:,} | " + " | ".join(f"{r:,.0f}" for r in rates) + " |")

    results: dict[tuple[str, int], dict[str, tuple[float, float]]] = {}
    scans: dict[tuple[str, int], float] = {}
    for backend in backends:
        for n in sizes:
            async with fresh(backend) as store:
                for start in range(0, n, 10_000):
                    await store.put([make(i) for i in range(start, min(n, start + 10_000))])
                    await store.put([make(i, "someone-else") for i in range(start, start + 1000)])
                results[backend, n] = await query_latencies(store, n, args.reps)
                scans[backend, n] = await scan_rate(store, n)

    cols = [(b, n) for b in backends for n in sizes]
    print(f"\n## query latency, ms p50 / p95 ({args.reps} queries each, one user)\n")
    print("| query | " + " | ".join(f"{b} {n // 1000}K" for b, n in cols) + " |")
    print("|---|" + "---:|" * len(cols))
    for name in QUERIES:
        cells = [f"{results[c][name][0]:.2f} / {results[c][name][1]:.2f}" for c in cols]
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("| scan, records/s | " + " | ".join(f"{scans[c]:,.0f}" for c in cols) + " |")


if __name__ == "__main__":
    asyncio.run(main())
