"""`nerve memory export|import` throughput on both backends (records and fact changes per second).

    .venv/bin/python bench/memory_transfer.py [--records 100000] [--runs 3]
                                              [--backends sqlite,postgres]

Writes a JSONL file of --records lines in a temporary directory: 200 users, every kind (memory,
event, turn, summary, and facts with three values each in their history), sessions of 50,
realistic text. Then per backend, each the median of --runs runs on a fresh store:
import through the Python API (transfer.import_lines, reading the file), the same through the
real CLI (`python -m nerve memory import FILE --config ...`, start-up included), importing the
file again into the full store (every line already there: nothing written), and exporting the
store to a file. PostgreSQL (NERVE_BENCH_POSTGRES_DSN, default
postgresql://postgres@127.0.0.1:5432/test) gets a schema per run, dropped after.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import BinaryIO

import asyncpg

from nerve.memory import transfer
from nerve.memory.jsonl import encode_change, encode_record
from nerve.memory.model import FactChange, Record, fact_id

DSN = os.environ.get("NERVE_BENCH_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test")
T0 = 1_800_000_000.0
SENTENCE = (
    "the user prefers green tea in the morning and reviews pull requests after lunch; deploys"
    " go out on thursdays, the staging database lives in mumbai"
)
WORDS = SENTENCE.split()
KINDS = ("memory", "event", "turn", "summary", "memory", "event", "turn", "memory")


def text(i: int, n: int) -> str:
    return " ".join(WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(n))


def write_file(path: Path, lines: int) -> int:
    """`lines` lines: records, and each 25th record a fact with 3 history lines; the count of
    record lines."""
    records = 0
    with open(path, "wb") as out:
        i = 0
        while i < lines:
            user, at = f"user-{i % 200}", T0 + i
            if i % 25 == 24 and i + 4 <= lines:
                entity, attribute = f"project {i % 997}", "status"
                for k, value in enumerate(("planned", "started", "shipped")):
                    change = FactChange(user, entity, attribute, value, f"s{i // 50}", at + k)
                    out.write(encode_change(change))
                record = Record.make(
                    id=fact_id(user, entity, attribute), user_id=user, tier="semantic",
                    kind="fact", intent="fact", importance=0.7, created_at=at + 2,
                    data={"entity": entity, "attribute": attribute, "value": "shipped"},
                )  # fmt: skip
                i += 4
            else:
                kind = KINDS[i % len(KINDS)]
                record = Record.make(
                    id=f"{int(at * 1000):012x}{uuid.uuid4().hex[:20]}", user_id=user,
                    tier="episodic", kind=kind, intent=f"intent_{i % 12}",
                    language="en", session_id=f"s{i // 50}", importance=0.4 + (i % 60) / 100,
                    data={"text": text(i, 12 + i % 20), "turn": i % 50, "tags": ["a", "b"]},
                    created_at=at, accessed_at=at + 60 if i % 3 else 0.0, access_count=i % 4,
                )  # fmt: skip
                i += 1
            out.write(encode_record(record))
            records += 1
    return records


def opened(path: Path, mode: str) -> BinaryIO:
    return open(path, mode)  # the caller's `with` closes it


def remove(directory: Path, name: str) -> None:
    for leftover in directory.glob(f"{name}*"):  # the database and its -wal, -shm
        leftover.unlink()


@asynccontextmanager
async def fresh(backend: str, tmp: Path) -> AsyncIterator[str]:
    """The storage URL of an empty store of `backend`, removed afterwards."""
    if backend == "sqlite":
        path = tmp / f"{uuid.uuid4().hex}.db"
        try:
            yield f"sqlite:///{path}"
        finally:
            remove(tmp, path.name)
        return
    schema = f"nerve_bench_{uuid.uuid4().hex[:8]}"
    try:
        yield f"{DSN}?schema={schema}"
    finally:
        conn = await asyncpg.connect(DSN)
        await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        await conn.close()


async def api_import(url: str, source: Path) -> float:
    store = transfer.open_store(url)
    await store.open()
    try:
        start = time.perf_counter()
        with opened(source, "rb") as lines:
            done = await transfer.import_lines(store, lines)
        assert not done.bad, done.errors
        return time.perf_counter() - start
    finally:
        await store.close()


def cli_import(url: str, source: Path, tmp: Path) -> float:
    config = tmp / f"{uuid.uuid4().hex}.yaml"
    config.write_text(f'storage: {{url: "{url}"}}\n')
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "nerve", "memory", "import", str(source), "--config", str(config)],
        check=True, stdout=subprocess.DEVNULL, cwd=tmp,
    )  # fmt: skip
    return time.perf_counter() - start


async def api_export(url: str, target: Path) -> float:
    store = transfer.open_store(url)
    await store.open()
    try:
        start = time.perf_counter()
        with opened(target, "wb") as out:
            await transfer.export(store, out.write)
        return time.perf_counter() - start
    finally:
        await store.close()


async def measure(backend: str, source: Path, tmp: Path, runs: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"import": [], "cli": [], "again": [], "export": []}
    for _ in range(runs):
        async with fresh(backend, tmp) as url:
            times["import"].append(await api_import(url, source))
            times["again"].append(await api_import(url, source))
            times["export"].append(await api_export(url, tmp / "export.jsonl"))
        async with fresh(backend, tmp) as url:
            times["cli"].append(cli_import(url, source, tmp))
    return times


async def reachable() -> bool:
    try:
        conn = await asyncpg.connect(DSN, timeout=5)
    except Exception:
        return False
    await conn.close()
    return True


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100_000, help="lines in the file")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--backends", default="sqlite,postgres")
    args = parser.parse_args()
    backends = args.backends.split(",")
    if "postgres" in backends and not await reachable():
        print(f"PostgreSQL is not reachable ({DSN.split('@')[-1]}): SQLite only\n")
        backends.remove("postgres")
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        source = tmp / "memory.jsonl"
        records = write_file(source, args.records)
        size = source.stat().st_size / 1e6
        print(f"{args.records:,} lines ({records:,} records, the rest fact changes), "
              f"{size:.1f} MB; lines/s, median of {args.runs} runs\n")  # fmt: skip
        print("| backend | import (API) | import (CLI, with start-up) | import again | export |")
        print("|---|---:|---:|---:|---:|")
        for backend in backends:
            times = await measure(backend, source, tmp, args.runs)
            cells = [f"{args.records / statistics.median(times[k]):,.0f}" for k in times]
            print(f"| {backend} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    asyncio.run(main())
