"""Memory search quality and cost on LoCoMo (SPEC ME-2, ME-6). Run: python bench/locomo.py

Quality: each LoCoMo conversation is one user; every turn is stored as a Record (kind "turn", one
session per LoCoMo session, data {speaker, text, date}, created_at the session's date). Each
question of categories 1-4 (multi-hop, temporal, open-domain, single-hop) is a search with the
question as query; evidence recall@k is the share of its evidence turns (`D<session>:<turn>`)
among the top k, averaged over questions, per category and overall. Evidence lists are taken as
given, after splitting the few that hold several ids in one string and fixing `D:11:26`-style
typos; questions without evidence are skipped. The data is read from --data and never copied
into the repo (LoCoMo is CC BY-NC 4.0).

Cost (--cost 10000,100000,1000000): one user with that many synthetic turns made by mixing
LoCoMo turns, in sessions of 20; add throughput, search latency (the LoCoMo questions as queries),
remove throughput and resident memory. bm25s, when installed, is timed on the same corpus for
comparison: a bench-only comparison, never a dependency of nerve.

Ablations: --no-context, --context 0.5,0.35,0.2, --captions (adds the image captions LoCoMo
ships with shared photos to the stored data), --k1, --b. --dense adds the embeddings channel
(needs the extra `embeddings`; its add and search times include embedding on the CPU).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from nerve.memory.index import CONTEXT, SearchIndex
from nerve.memory.model import Record

ROOT = Path(__file__).resolve().parent.parent
KS = (5, 10, 25)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
EVIDENCE = re.compile(r"D\d+:\d+")


def read(path: Path, captions: bool) -> list[tuple[list[Record], list[dict[str, Any]]]]:
    """(records, questions) for each conversation."""
    out = []
    for conv in json.loads(path.read_text(encoding="utf-8")):
        user, talk = conv["sample_id"], conv["conversation"]
        records = []
        n = 1
        while f"session_{n}" in talk:
            date = talk[f"session_{n}_date_time"]  # "1:56 pm on 8 May, 2023"
            at = datetime.strptime(date, "%I:%M %p on %d %B, %Y").timestamp()
            for i, turn in enumerate(talk[f"session_{n}"]):
                data = {"speaker": turn["speaker"], "text": turn["text"], "date": date}
                if captions and turn.get("blip_caption"):
                    data["shared"] = turn["blip_caption"]
                records.append(
                    Record.make(
                        id=f"{user}/{turn['dia_id']}",
                        user_id=user,
                        tier="episodic",
                        intent="chat",
                        kind="turn",
                        session_id=f"{user}/{n}",
                        data=data,
                        importance=0.5,
                        created_at=at + i,  # turn order within the session
                    )
                )
            n += 1
        questions = []
        for qa in conv["qa"]:
            ids = EVIDENCE.findall(" ".join(qa["evidence"]).replace("D:", "D"))
            if qa["category"] in CATEGORIES and ids:
                questions.append(
                    {
                        "user": user,
                        "q": qa["question"],
                        "cat": qa["category"],
                        "evidence": [f"{user}/{i}" for i in ids],
                    }
                )
        out.append((records, questions))
    return out


Recall = dict[int, dict[int | str, list[float]]]


def count(recall: Recall, qa: dict[str, Any], ranked: list[str]) -> None:
    """Add one question's evidence recall at each k."""
    for k in KS:
        share = len(set(ranked[:k]) & set(qa["evidence"])) / len(qa["evidence"])
        recall[k][qa["cat"]].append(share)
        recall[k]["all"].append(share)


def table(recall: Recall) -> None:
    print("| category | questions | R@5 | R@10 | R@25 |")
    print("| --- | --- | --- | --- | --- |")
    for cat in [*CATEGORIES, "all"]:
        name = f"{cat} {CATEGORIES[cat]}" if isinstance(cat, int) else "**all**"
        cells = " | ".join(f"{statistics.fmean(recall[k][cat]):.3f}" for k in KS)
        print(f"| {name} | {len(recall[5][cat])} | {cells} |")


def quality(convs: list[tuple[list[Record], list[dict[str, Any]]]], index: SearchIndex) -> None:
    for records, _ in convs:
        index.add(records)
    recall: dict[int, dict[int | str, list[float]]] = {k: defaultdict(list) for k in KS}
    took = []
    for _, questions in convs:
        for qa in questions:
            start = time.perf_counter()
            hits = index.search(qa["user"], qa["q"], max(KS))
            took.append(time.perf_counter() - start)
            count(recall, qa, [record_id for record_id, _ in hits])
    table(recall)
    ms = sorted(t * 1000 for t in took)
    mean, p95 = statistics.fmean(ms), ms[int(0.95 * len(ms))]
    print(f"\n{len(ms)} queries over {len(index)} records: {mean:.2f} ms/query, p95 {p95:.2f}\n")


def through_api(convs: list[tuple[list[Record], list[dict[str, Any]]]]) -> None:
    """The same measure through nerve's public Python API: `Memory` on SQLite with the WAL on."""
    import asyncio
    import tempfile

    from nerve.config import parse_config
    from nerve.memory import build_memory

    async def run() -> None:
        with tempfile.TemporaryDirectory() as tmp:
            config = parse_config({"storage": {"url": f"sqlite:///{tmp}/bench.db"}}, environ={})
            memory = build_memory(config, environ={})
            await memory.open()
            dia: dict[str, str] = {}  # nerve's id -> the LoCoMo turn id
            start = time.perf_counter()
            for records, _ in convs:
                for i in range(0, len(records), 200):  # concurrent writers share WAL fsyncs
                    batch = records[i : i + 200]
                    stored = await asyncio.gather(*(
                        memory.store_memory(
                            r.user_id, tier="episodic", intent="chat", kind="turn",
                            session_id=r.session_id, data=r.data, importance=0.5,
                            created_at=r.created_at,
                        ) for r in batch
                    ))  # fmt: skip
                    dia.update((s.id, r.id) for s, r in zip(stored, batch, strict=True) if s.id)
            wrote = time.perf_counter() - start
            recall: dict[int, dict[int | str, list[float]]] = {k: defaultdict(list) for k in KS}
            took = []
            for _, questions in convs:
                for qa in questions:
                    t0 = time.perf_counter()
                    found = await memory.recall(qa["user"], query=qa["q"], limit=max(KS))
                    took.append(time.perf_counter() - t0)
                    count(recall, qa, [dia[x.record.id] for x in found])
            await memory.close()
        table(recall)
        ms = sorted(t * 1000 for t in took)
        print(
            f"\n{len(dia)} turns stored in {wrote:.1f} s ({len(dia) / wrote:.0f}/s, "
            f"acknowledged through the WAL); {len(ms)} recalls: "
            f"{statistics.fmean(ms):.2f} ms mean, p95 {ms[int(0.95 * len(ms))]:.2f} ms\n"
        )

    asyncio.run(run())


def synthetic(pool: list[str], n: int, seed: int = 7) -> list[Record]:
    """n turns of one user: each a LoCoMo turn with a few words of another, 20 to a session."""
    rng = random.Random(seed)
    words = [text.split() for text in pool]
    start = 1.6e9
    out = []
    for i in range(n):
        extra = rng.choice(words)
        text = rng.choice(pool) + " " + " ".join(rng.sample(extra, min(4, len(extra))))
        out.append(
            Record.make(
                id=f"r{i}",
                user_id="u",
                tier="episodic",
                intent="chat",
                kind="turn",
                session_id=f"s{i // 20}",
                data={"speaker": rng.choice(("Ann", "Bo")), "text": text},
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


def timed(run: Callable[[], object], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        out.append((time.perf_counter() - start) * 1000)
    return sorted(out)


def cost(convs: list[tuple[list[Record], list[dict[str, Any]]]], sizes: list[int]) -> None:
    pool = [r.data["text"] for records, _ in convs for r in records]
    queries = [qa["q"] for _, questions in convs for qa in questions]
    print(
        "| records | add rec/s (bulk) | add rec/s (one at a time) | search p50 ms | p95 ms "
        "| max ms | remove rec/s | RSS MB |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
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
        p50, p95 = lat[len(lat) // 2], lat[int(0.95 * len(lat))]
        print(
            f"| {n:,} | {bulk:,.0f} | {single:,.0f} | {p50:.2f} | {p95:.2f} | {lat[-1]:.1f} "
            f"| {removed:,.0f} | {memory:,.0f} |",
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
        f"({build:.2f} s) | - | {lat[len(lat) // 2]:.2f} | {lat[int(0.95 * len(lat))]:.2f} "
        f"| {lat[-1]:.1f} | - | - |",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "locomo")
    parser.add_argument("--file", default="locomo_dev.json")
    parser.add_argument(
        "--context",
        default=",".join(map(str, CONTEXT)),
        help="weights of the turns 1, 2, ... places away",
    )
    parser.add_argument("--no-context", action="store_true")
    parser.add_argument("--captions", action="store_true", help="store image captions too")
    parser.add_argument("--k1", type=float, default=1.2)
    parser.add_argument("--b", type=float, default=0.75)
    parser.add_argument(
        "--dense",
        type=float,
        metavar="WEIGHT",
        nargs="?",
        const=0.5,
        help="fuse MiniLM embeddings at this weight (default 0.5)",
    )
    parser.add_argument("--cost", help="comma-separated record counts, e.g. 10000,100000")
    parser.add_argument(
        "--index-only", action="store_true",
        help="measure the search index alone, not through the Memory API (SQLite + WAL)",
    )  # fmt: skip
    args = parser.parse_args()
    path = args.data / args.file
    if not path.exists():
        sys.exit(f"{path} not found: pass --data DIR (LoCoMo is not bundled with nerve)")
    convs = read(path, args.captions)
    context = () if args.no_context else tuple(float(w) for w in args.context.split(","))
    dense = None
    if args.dense is not None:
        from nerve.memory.dense import DenseIndex, minilm

        dense = DenseIndex(minilm(), weight=args.dense)
    print(
        f"### LoCoMo evidence recall, {path.name}, context {context or 'none'}, "
        f"dense {args.dense or 'no'}\n"
    )
    start = time.perf_counter()
    if args.index_only or dense is not None:
        quality(convs, SearchIndex(k1=args.k1, b=args.b, context=context, dense=dense))
    else:
        print("Through the public API: Memory.store_memory / Memory.recall, SQLite, WAL on.\n")
        through_api(convs)
    print(f"whole run (adding included): {time.perf_counter() - start:.1f} s\n")
    if args.cost:
        print("### Cost, one user\n")
        cost(convs, [int(n) for n in args.cost.split(",")])


if __name__ == "__main__":
    main()
