"""Memory at scale, through nerve's public surfaces (SPEC ME-2, ME-3, ME-8; DESIGN "State and
scale").

    .venv/bin/python bench/memory_scale.py startup [--sizes 10000,100000,1000000]
    .venv/bin/python bench/memory_scale.py search  [--sizes 100000,1000000] [--backends ...]
    .venv/bin/python bench/memory_scale.py writes  [--writers 1,8,64] [--backends ...]

startup  a SQLite store of N records (one user holding half of them, the rest over 10,000
         users), then a real `nerve serve` on it: seconds until /health answers, its RSS then,
         the first search of the big user (its index is loaded) and a second one, RSS after.
search   `Memory.recall(query=...)` p50/p95 ms over the LoCoMo questions as queries, warm,
         for one user holding all N records and across 10,000 users holding N/10,000 each
         (a random user per query), plus the first (cold) search of the big user.
writes   acknowledged `Memory.store_memory` calls per second with W concurrent writers, each
         waiting for its acknowledgement: SQLite with group commit, SQLite with the file WAL,
         PostgreSQL with group commit. Median of --runs runs of --seconds each.

Texts are LoCoMo turns mixed as bench/locomo.py does (read from ../shared/data, never copied).
The script runs unchanged on older nerve checkouts (PYTHONPATH=<checkout>/src) for "before"
figures. PostgreSQL: NERVE_BENCH_POSTGRES_DSN (default postgresql://postgres@127.0.0.1:5432/test),
a schema made for the run and dropped after.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import asyncpg
import httpx

from nerve.config import parse_config
from nerve.memory import Memory, build_memory
from nerve.memory.model import Record
from nerve.memory.sqlite import SQLiteStore

ROOT = Path(__file__).resolve().parent.parent
LOCOMO = ROOT.parent / "shared" / "data" / "locomo" / "locomo_dev.json"
DSN = os.environ.get("NERVE_BENCH_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test")
USERS = 10_000
T0 = 1.6e9


def texts() -> tuple[list[str], list[str]]:
    """(turn texts, questions) of LoCoMo."""
    convs = json.loads(LOCOMO.read_text(encoding="utf-8"))
    turns = [t["text"] for c in convs for k, v in c["conversation"].items()
             if k.startswith("session_") and isinstance(v, list) for t in v]  # fmt: skip
    return turns, [qa["question"] for c in convs for qa in c["qa"]]


def records(first: int, n: int, user: Callable[[int], str], pool: list[str]) -> list[Record]:
    """Records first..first+n-1 (the same ones on every run)."""
    rng = random.Random(first)
    words = [t.split() for t in pool]
    out = []
    for i in range(first, first + n):
        extra = rng.choice(words)
        text = rng.choice(pool) + " " + " ".join(rng.sample(extra, min(4, len(extra))))
        out.append(Record.make(
            user_id=user(i), tier="episodic", intent="chat", kind="turn",
            session_id=f"s{i // 20}", data={"text": text}, importance=0.5,
            created_at=T0 + i * 60,
        ))  # fmt: skip
    return out


def mixed_user(i: int) -> str:
    """Half the records are the big user's, the rest spread over USERS users."""
    return "big" if i % 2 == 0 else f"u{i % USERS}"


LAYOUTS: list[tuple[str, Callable[[int], str]]] = [
    ("one user", lambda i: "big"),
    (f"{USERS:,} users", lambda i: f"u{i % USERS}"),
]


async def fill(path: Path, n: int, user: Callable[[int], str], pool: list[str]) -> None:
    store = SQLiteStore(path)
    await store.open()
    for start in range(0, n, 20_000):
        await store.put(records(start, min(20_000, n - start), user, pool))
    await store.close()


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def startup(sizes: list[int]) -> None:
    pool, questions = texts()
    print("| records | /health after s | RSS MB | first search of the big user ms "
          "| second ms | RSS after MB |")  # fmt: skip
    print("| --- | --- | --- | --- | --- | --- |")
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "nerve.db"
            asyncio.run(fill(db, n, mixed_user, pool))
            config = Path(tmp) / "nerve.yaml"
            config.write_text(json.dumps({"storage": {"url": f"sqlite:///{db}"},
                                          "probes": {"interval_seconds": 0}}))  # fmt: skip
            start = time.perf_counter()
            proc = subprocess.Popen(
                [sys.executable, "-m", "nerve", "serve", "--config", str(config), "--port", "0",
                 "--log-level", "info"],
                cwd=tmp, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE, text=True, env={**os.environ, "NERVE_ADMIN_PASSWORD": "x"},
            )  # fmt: skip
            try:
                url = _wait_ready(proc)
                ready = time.perf_counter() - start
                rss = rss_mb(proc.pid)
                body = {"user_id": "big", "query": questions[0]}
                took = []
                with httpx.Client(timeout=600) as client:  # one client: no TLS setup per call
                    for _ in range(2):
                        t0 = time.perf_counter()
                        client.post(f"{url}/api/memory/recall", json=body).raise_for_status()
                        took.append((time.perf_counter() - t0) * 1000)
                print(f"| {n:,} | {ready:.2f} | {rss:.0f} | {took[0]:,.0f} | {took[1]:.1f} "
                      f"| {rss_mb(proc.pid):.0f} |", flush=True)  # fmt: skip
            finally:
                proc.terminate()
                proc.wait(30)


def _wait_ready(proc: subprocess.Popen[str]) -> str:
    assert proc.stderr is not None
    for line in proc.stderr:
        if "Uvicorn running on " in line:
            url = line.split("Uvicorn running on ", 1)[1].split()[0]
            break
    else:
        raise RuntimeError("nerve serve exited before it listened")
    while True:
        try:
            if httpx.get(f"{url}/health", timeout=60).status_code == 200:
                return url
        except httpx.TransportError:
            time.sleep(0.01)


async def open_memory(backend: str, where: str, wal: bool = False) -> Memory:
    url = f"sqlite:///{where}/nerve.db" if backend == "sqlite" else where
    config = parse_config({"storage": {"url": url}, "memory": {"wal": {"enabled": wal,
                           "path": f"{where}/memory.wal" if wal else None}}},
                          environ={})  # fmt: skip
    memory = build_memory(config, environ={})
    await memory.open()
    return memory


class Place:
    """A fresh database of a backend: a temporary directory, or a PostgreSQL schema."""

    def __init__(self, backend: str) -> None:
        self.backend = backend

    async def __aenter__(self) -> str:
        if self.backend == "sqlite":
            self._tmp = tempfile.TemporaryDirectory()
            return self._tmp.name
        self.schema = f"bench_{uuid.uuid4().hex[:10]}"
        return f"{DSN}?schema={self.schema}"

    async def __aexit__(self, *exc: object) -> None:
        if self.backend == "sqlite":
            self._tmp.cleanup()
            return
        conn = await asyncpg.connect(DSN)
        await conn.execute(f'DROP SCHEMA IF EXISTS "{self.schema}" CASCADE')
        await conn.close()


async def search(sizes: list[int], backends: list[str]) -> None:
    pool, questions = texts()
    print("| backend | records | layout | cold first search ms | p50 ms | p95 ms |")
    print("| --- | --- | --- | --- | --- | --- |")
    for backend in backends:
        for n in sizes:
            for layout, user in LAYOUTS:
                async with Place(backend) as where:
                    memory = await open_memory(backend, where)
                    for start in range(0, n, 20_000):
                        await memory.store.put(records(start, min(20_000, n - start), user, pool))
                    await memory.close()
                    memory = await open_memory(backend, where)
                    who = _picker(layout == "one user")
                    t0 = time.perf_counter()
                    await memory.recall(who(), query=questions[0], touch=False)
                    cold = (time.perf_counter() - t0) * 1000
                    if layout != "one user":  # warm every user's index first
                        for u in range(USERS):
                            await memory.recall(f"u{u}", query="x", touch=False)
                    took = []
                    for q in questions:
                        t0 = time.perf_counter()
                        await memory.recall(who(), query=q, touch=False)
                        took.append((time.perf_counter() - t0) * 1000)
                    await memory.close()
                took.sort()
                print(f"| {backend} | {n:,} | {layout} | {cold:,.0f} | {took[len(took) // 2]:.2f}"
                      f" | {took[int(0.95 * len(took))]:.2f} |", flush=True)  # fmt: skip


def _picker(one_user: bool) -> Callable[[], str]:
    """Whose records a query searches: the one user, or a random one of USERS."""
    rng = random.Random(3)
    return (lambda: "big") if one_user else (lambda: f"u{rng.randrange(USERS)}")


async def writes(
    writer_counts: list[int], backends: list[str], runs: int, seconds: float, postgres_wal: bool
) -> None:
    print("| backend | acknowledged after | writers | writes/s (median) |")
    print("| --- | --- | --- | --- |")
    walled = ("sqlite", "postgres") if postgres_wal else ("sqlite",)
    setups = [(b, wal) for b in backends for wal in ((False, True) if b in walled else (False,))]
    for backend, wal in setups:
        for writers in writer_counts:
            rates = []
            for _ in range(runs):
                async with Place(backend) as where:
                    memory = await open_memory(backend, where, wal=wal)
                    rates.append(await _write_rate(memory, writers, seconds))
                    await memory.close()
            how = "WAL fsync" if wal else "commit (group)"
            print(
                f"| {backend} | {how} | {writers} | {statistics.median(rates):,.0f} |", flush=True
            )


async def _write_rate(memory: Memory, writers: int, seconds: float) -> float:
    done = 0
    deadline = time.perf_counter() + seconds

    async def writer(w: int) -> None:
        nonlocal done
        i = 0
        while time.perf_counter() < deadline:
            await memory.store_memory(f"w{w % 100}", tier="episodic", intent="note",
                                      data={"text": f"write {w} {i}"}, importance=0.5)  # fmt: skip
            done, i = done + 1, i + 1

    start = time.perf_counter()
    await asyncio.gather(*(writer(w) for w in range(writers)))
    return done / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["startup", "search", "writes"])
    parser.add_argument("--sizes", default=None)
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--writers", default="1,8,64")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument(
        "--postgres-wal", action="store_true",
        help="also PostgreSQL behind the file WAL (older checkouts only: now refused)",
    )  # fmt: skip
    args: Any = parser.parse_args()
    backends = args.backends.split(",")
    if args.what == "startup":
        startup([int(n) for n in (args.sizes or "10000,100000,1000000").split(",")])
    elif args.what == "search":
        asyncio.run(search([int(n) for n in (args.sizes or "100000,1000000").split(",")],
                           backends))  # fmt: skip
    else:
        asyncio.run(writes([int(w) for w in args.writers.split(",")], backends, args.runs,
                           args.seconds, args.postgres_wal))  # fmt: skip


if __name__ == "__main__":
    main()
