"""Memory through its public Python API (`Memory`): acknowledged writes/s and recall latency.

    python bench/memory_api.py [--sizes 10000,100000] [--backends sqlite,postgres]

For each backend and size: one user's records are written as perception events by 64 concurrent
writers (each `record_event` returns once committed in the store: group commit), then
200 recalls with a text query and 200 without are timed. PostgreSQL is used at
postgresql://postgres@127.0.0.1:5432/test (override with NERVE_BENCH_POSTGRES_DSN), in a schema
of its own that is dropped afterwards. Everything stays on this machine.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import statistics
import tempfile
import time
import uuid

from nerve.config import parse_config
from nerve.memory import build_memory

WORDS = [
    "login",
    "auth",
    "token",
    "pagination",
    "users",
    "endpoint",
    "cache",
    "redis",
    "postgres",
    "migration",
    "deploy",
    "docker",
    "kubernetes",
    "error",
    "timeout",
    "retry",
    "payment",
    "invoice",
    "report",
    "csv",
    "json",
    "export",
    "import",
    "schedule",
    "reminder",
    "email",
    "slack",
    "message",
    "summary",
    "test",
    "fixture",
    "coverage",
    "refactor",
    "module",
    "function",
    "class",
]


def payload(rng: random.Random) -> tuple[str, dict[str, object]]:
    words = " ".join(rng.choice(WORDS) for _ in range(8))
    kind = rng.choice(("body_bash", "eye_read", "nose_error", "tongue_edit"))
    field = {"body_bash": "command", "eye_read": "path", "nose_error": "message",
             "tongue_edit": "path"}[kind]  # fmt: skip
    return kind, {field: words}


async def run(url: str, size: int, writers: int = 64) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        config = parse_config(
            {"storage": {"url": url}, "memory": {"wal": {"path": f"{tmp}/memory.wal"}}},
            environ={},
        )
        memory = build_memory(config, environ={})
        await memory.open()
        try:
            rng = random.Random(1)
            jobs = [payload(rng) for _ in range(size)]
            start = time.perf_counter()

            async def writer(share: list[tuple[str, dict[str, object]]]) -> None:
                for kind, body in share:
                    await memory.record_event("bench", "s1", kind, body)

            await asyncio.gather(*(writer(jobs[i::writers]) for i in range(writers)))
            wrote = size / (time.perf_counter() - start)
            timings: dict[str, list[float]] = {"query": [], "filter": []}
            for i in range(400):
                mode = "query" if i % 2 else "filter"
                t0 = time.perf_counter()
                if mode == "query":
                    await memory.recall("bench", query=" ".join(rng.sample(WORDS, 3)), limit=10)
                else:
                    await memory.recall("bench", intent="nose_error", limit=10)
                timings[mode].append((time.perf_counter() - t0) * 1000)
            await memory.forget_user("bench")
        finally:
            await memory.close()
    out = {"writes_per_s": wrote}
    for mode, ms in timings.items():
        ms.sort()
        out[f"{mode}_p50"] = statistics.median(ms)
        out[f"{mode}_p95"] = ms[int(0.95 * len(ms))]
    return out


async def drop_schema(dsn: str, schema: str) -> None:
    import asyncpg

    with contextlib.suppress(OSError, asyncpg.PostgresError):
        conn = await asyncpg.connect(dsn)
        try:
            await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        finally:
            await conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--backends", default="sqlite,postgres")
    args = parser.parse_args()
    dsn = os.environ.get("NERVE_BENCH_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test")
    print("| backend | records | acknowledged writes/s | recall+query p50 / p95 ms "
          "| recall+filter p50 / p95 ms |")  # fmt: skip
    print("|---|---:|---:|---:|---:|")
    for backend in args.backends.split(","):
        for size in (int(s) for s in args.sizes.split(",")):
            with tempfile.TemporaryDirectory() as tmp:
                url = (f"sqlite:///{tmp}/bench.db" if backend == "sqlite"
                       else f"{dsn}?schema=bench_{uuid.uuid4().hex[:8]}")  # fmt: skip
                try:
                    r = asyncio.run(run(url, size))
                except OSError as e:
                    print(f"| {backend} | {size} | unavailable: {e} | | |")
                    continue
                finally:
                    if backend != "sqlite":
                        asyncio.run(drop_schema(dsn, url.rsplit("=", 1)[1]))
            print(f"| {backend} | {size} | {r['writes_per_s']:.0f} | {r['query_p50']:.2f} / "
                  f"{r['query_p95']:.2f} | {r['filter_p50']:.2f} / {r['filter_p95']:.2f} |",
                  flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
