"""The cost of memory search at scale, on LoCoMo text (SPEC ME-2): bench/locomo.py --cost N,...

One user with N synthetic turns made by mixing LoCoMo turns (each keeps its speaker, so queries
that name one exercise the speaker signal), in sessions of 20; add throughput, search latency
(the LoCoMo questions as queries), remove throughput and resident memory. bm25s, when
installed, is timed on the same corpus for comparison: a bench-only comparison, never a
dependency of nerve.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

from nerve.memory.index import SearchIndex
from nerve.memory.model import Record

__all__ = ["cost"]


def synthetic(pool: list[tuple[str, str]], n: int, seed: int = 7) -> list[Record]:
    """n turns of one user: each a LoCoMo (speaker, turn) with a few words of another turn, 20
    to a session."""
    rng = random.Random(seed)
    words = [text.split() for _, text in pool]
    start = 1.6e9
    out = []
    for i in range(n):
        extra = rng.choice(words)
        speaker, text = rng.choice(pool)
        text += " " + " ".join(rng.sample(extra, min(4, len(extra))))
        out.append(
            Record.make(
                id=f"r{i}",
                user_id="u",
                tier="episodic",
                intent="chat",
                kind="turn",
                session_id=f"s{i // 20}",
                data={"speaker": speaker, "text": text},
                importance=0.5,
                created_at=start + i * 60,
            )
        )
    return out


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cost(pool: list[tuple[str, str]], queries: list[str], sizes: list[int]) -> None:
    print(
        "| records | add rec/s (bulk) | add rec/s (one at a time) | search mean ms | p50 ms "
        "| p95 ms | max ms | remove rec/s | RSS MB |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for n in sizes:
        records = synthetic(pool, n)
        base = rss_mb()
        index = SearchIndex()
        start = time.perf_counter()
        index.add(records[: n - 1000])
        bulk = (n - 1000) / (time.perf_counter() - start)
        start = time.perf_counter()
        for record in records[n - 1000 :]:
            index.add([record])
        single = 1000 / (time.perf_counter() - start)
        memory = rss_mb() - base
        lat = []
        for q in queries:
            start = time.perf_counter()
            index.search("u", q, 25)
            lat.append((time.perf_counter() - start) * 1000)
        lat.sort()
        doomed = [r.id for r in random.Random(1).sample(records, 1000)]
        start = time.perf_counter()
        index.remove(doomed)
        removed = 1000 / (time.perf_counter() - start)
        mean, p50, p95 = sum(lat) / len(lat), lat[len(lat) // 2], lat[int(0.95 * len(lat))]
        print(
            f"| {n:,} | {bulk:,.0f} | {single:,.0f} | {mean:.2f} | {p50:.2f} | {p95:.2f} "
            f"| {lat[-1]:.1f} | {removed:,.0f} | {memory:,.0f} |",
            flush=True,
        )
        del index
        bm25s_row(records, queries)


def bm25s_row(records: list[Record], queries: list[str]) -> None:
    """The same corpus in bm25s (sparse matrix, rebuilt from scratch on every change)."""
    try:
        import bm25s  # type: ignore[import-untyped]
        import Stemmer
    except ImportError:
        return
    stemmer = Stemmer.Stemmer("english")
    texts = [r.text for r in records]
    start = time.perf_counter()
    tokens = bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False)
    retriever = bm25s.BM25()
    retriever.index(tokens, show_progress=False)
    build = time.perf_counter() - start
    lat = []
    for q in queries:
        start = time.perf_counter()
        qt = bm25s.tokenize([q], stopwords="en", stemmer=stemmer, show_progress=False)
        retriever.retrieve(qt, k=25, show_progress=False)
        lat.append((time.perf_counter() - start) * 1000)
    lat.sort()
    print(
        f"| ↳ bm25s, no context | full rebuild {len(records) / build:,.0f} rec/s "
        f"({build:.2f} s) | - | {sum(lat) / len(lat):.2f} | {lat[len(lat) // 2]:.2f} "
        f"| {lat[int(0.95 * len(lat))]:.2f} | {lat[-1]:.1f} | - | - |",
        flush=True,
    )
