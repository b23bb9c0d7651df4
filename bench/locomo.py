"""Memory search quality on LoCoMo, tuned on some conversations, held out on others (SPEC ME-2,
ME-6). Run: python bench/locomo.py [--index-only] [--search] [--cost 100000]

Quality: each LoCoMo conversation is one user; every turn is stored as a Record (kind "turn", one
session per LoCoMo session, data {speaker, text, date}, created_at the session's date). Each
question of categories 1-4 (multi-hop, temporal, open-domain, single-hop) is a search with the
question as query; evidence recall@k is the share of its evidence turns (`D<session>:<turn>`)
among the top k, averaged over questions, per category and overall. Evidence lists are taken as
given, after splitting the few that hold several ids in one string and fixing `D:11:26`-style
typos; questions without evidence are skipped. The data is read from --data and never copied
into the repo (LoCoMo is CC BY-NC 4.0).

Honest figures: the conversations are split into a tune part (--tune, default 1-3) and a
held-out part (--held-out, default 4-5), each reported on its own. Choose settings by the tune
part only; the held-out figure is the one that counts. --search does exactly that: a coordinate
search over the knobs (bench/locomo_search.py) scored on the tune part alone, then the chosen
setting's held-out table, computed once, and an ablation of each signal.

Knobs (the shipped defaults unless given): --k1, --b, --context 0.5,0.25 / --no-context,
--session W (session-level BM25 blended in), --speaker B (turns of a speaker the question names),
--no-stop-words, --captions (adds the image captions LoCoMo ships with shared photos to the
stored data). Without --index-only the measure runs through nerve's public API (`Memory` on
SQLite, the shipped defaults only). --dense adds the embeddings channel (extra `embeddings`).
--cost 10000,100000 times one big user (bench/locomo_cost.py).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from nerve.memory import bm25
from nerve.memory.bm25 import UserIndex
from nerve.memory.index import CONTEXT, SearchIndex
from nerve.memory.model import Record

ROOT = Path(__file__).resolve().parent.parent
KS = (5, 10, 25)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
EVIDENCE = re.compile(r"D\d+:\d+")

Conversation = tuple[list[Record], list[dict[str, Any]]]


@dataclass(frozen=True)
class Setting:
    """The knobs of the lexical index; the defaults are what nerve ships."""

    k1: float = bm25.K1
    b: float = bm25.B
    context: tuple[float, ...] = CONTEXT
    session: float = bm25.SESSION
    speaker: float = bm25.SPEAKER
    stop_words: bool = True

    def shipped(self) -> bool:
        return (self.session, self.speaker, self.stop_words) == (
            bm25.SESSION, bm25.SPEAKER, True
        )  # fmt: skip

    def __str__(self) -> str:
        context = ",".join(f"{w:g}" for w in self.context) or "none"
        return (
            f"k1 {self.k1:g}, b {self.b:g}, context {context}, session {self.session:g}, "
            f"speaker {self.speaker:g}, stop words {'on' if self.stop_words else 'off'}"
        )


class Tuned:
    """SearchIndex's per-user dispatch over UserIndex with every knob exposed."""

    def __init__(self, setting: Setting) -> None:
        self.setting = setting
        self.users: dict[str, UserIndex] = {}

    def add(self, records: Iterable[Record]) -> None:
        s = self.setting
        for record in records:
            user = self.users.get(record.user_id)
            if user is None:
                user = self.users[record.user_id] = UserIndex(
                    s.k1, s.b, s.context, session=s.session, speaker=s.speaker,
                    stop_words=s.stop_words,
                )  # fmt: skip
            user.add(record)

    def search(self, user_id: str, query: str, k: int) -> list[tuple[str, float]]:
        user = self.users.get(user_id)
        return user.search(query, k, None) if user else []

    def __len__(self) -> int:
        return sum(len(u.slot_of) for u in self.users.values())


def read(path: Path, captions: bool) -> list[Conversation]:
    """(records, questions) for each conversation, in file order."""
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
                        id=f"{user}/{turn['dia_id']}", user_id=user, tier="episodic",
                        intent="chat", kind="turn", session_id=f"{user}/{n}", data=data,
                        importance=0.5, created_at=at + i,  # turn order within the session
                    )
                )  # fmt: skip
            n += 1
        questions = []
        for qa in conv["qa"]:
            ids = EVIDENCE.findall(" ".join(qa["evidence"]).replace("D:", "D"))
            if qa["category"] in CATEGORIES and ids:
                questions.append({
                    "user": user, "q": qa["question"], "cat": qa["category"],
                    "evidence": [f"{user}/{i}" for i in ids],
                })  # fmt: skip
        out.append((records, questions))
    return out


def numbers(spec: str) -> list[int]:
    """'1-3' or '4,5' -> 1-based conversation numbers."""
    out: list[int] = []
    for part in spec.split(","):
        first, _, last = part.partition("-")
        out.extend(range(int(first), int(last or first) + 1))
    return out


class Recall:
    """Evidence recall at each k, per category and overall, plus ms per query."""

    def __init__(self) -> None:
        self.shares: dict[int, dict[int | str, list[float]]] = {k: defaultdict(list) for k in KS}
        self.ms: list[float] = []

    def count(self, qa: dict[str, Any], ranked: list[str], ms: float) -> None:
        for k in KS:
            share = len(set(ranked[:k]) & set(qa["evidence"])) / len(qa["evidence"])
            self.shares[k][qa["cat"]].append(share)
            self.shares[k]["all"].append(share)
        self.ms.append(ms)

    def at(self, k: int = 10, cat: int | str = "all") -> float:
        return statistics.fmean(self.shares[k][cat])

    def table(self, title: str) -> None:
        print(f"{title}\n\n| category | questions | R@5 | R@10 | R@25 |")
        print("| --- | --- | --- | --- | --- |")
        for cat in [*CATEGORIES, "all"]:
            name = f"{cat} {CATEGORIES[cat]}" if isinstance(cat, int) else "**all**"
            cells = " | ".join(f"{self.at(k, cat):.3f}" for k in KS)
            print(f"| {name} | {len(self.shares[5][cat])} | {cells} |")
        ms = sorted(self.ms)
        p95 = ms[int(0.95 * len(ms))]
        print(f"\n{len(ms)} queries: {statistics.fmean(ms):.2f} ms/query, p95 {p95:.2f}\n")


def quality(convs: list[Conversation], index: SearchIndex | Tuned) -> Recall:
    for records, _ in convs:
        index.add(records)
    recall = Recall()
    for _, questions in convs:
        for qa in questions:
            start = time.perf_counter()
            hits = index.search(qa["user"], qa["q"], max(KS))
            ms = (time.perf_counter() - start) * 1000
            recall.count(qa, [record_id for record_id, _ in hits], ms)
    return recall


def through_api(convs: list[Conversation]) -> Recall:
    """The same measure through nerve's public Python API: `Memory` on SQLite."""
    import asyncio
    import tempfile

    from nerve.config import parse_config
    from nerve.memory import build_memory

    async def run() -> Recall:
        with tempfile.TemporaryDirectory() as tmp:
            config = parse_config({"storage": {"url": f"sqlite:///{tmp}/bench.db"}}, environ={})
            memory = build_memory(config, environ={})
            await memory.open()
            dia: dict[str, str] = {}  # nerve's id -> the LoCoMo turn id
            for records, _ in convs:
                for i in range(0, len(records), 200):  # concurrent writers share commits
                    batch = records[i : i + 200]
                    stored = await asyncio.gather(*(
                        memory.store_memory(
                            r.user_id, tier="episodic", intent="chat", kind="turn",
                            session_id=r.session_id, data=r.data, importance=0.5,
                            created_at=r.created_at,
                        ) for r in batch
                    ))  # fmt: skip
                    dia.update((s.id, r.id) for s, r in zip(stored, batch, strict=True) if s.id)
            recall = Recall()
            for _, questions in convs:
                for qa in questions:
                    t0 = time.perf_counter()
                    found = await memory.recall(qa["user"], query=qa["q"], limit=max(KS))
                    ms = (time.perf_counter() - t0) * 1000
                    recall.count(qa, [dia[x.record.id] for x in found], ms)
            await memory.close()
            return recall

    return asyncio.run(run())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add = parser.add_argument
    add("--data", type=Path, default=ROOT.parent / "shared" / "data" / "locomo")
    add("--file", default="locomo_dev.json")
    add("--tune", default="1-3", help="conversations to tune on (1-based), e.g. 1-3")
    add("--held-out", default="4-5", help="conversations held out, e.g. 4-5")
    add("--search", action="store_true", help="tune the knobs on --tune, report --held-out once")
    add("--context", default=",".join(map(str, CONTEXT)), help="weights 1, 2, ... turns away")
    add("--no-context", action="store_true")
    add("--k1", type=float, default=bm25.K1)
    add("--b", type=float, default=bm25.B)
    add("--session", type=float, default=bm25.SESSION, help="weight of the session's score")
    add("--speaker", type=float, default=bm25.SPEAKER, help="boost of the named speaker's turns")
    add("--no-stop-words", action="store_true")
    add("--captions", action="store_true", help="store image captions too")
    add("--dense", type=float, metavar="WEIGHT", nargs="?", const=0.5, help="fuse MiniLM")
    add("--cost", help="comma-separated record counts, e.g. 10000,100000")
    add("--index-only", action="store_true", help="the search index alone, not through Memory")
    args = parser.parse_args()
    path = args.data / args.file
    if not path.exists():
        sys.exit(f"{path} not found: pass --data DIR (LoCoMo is not bundled with nerve)")
    convs = read(path, args.captions)
    parts = {"tune": numbers(args.tune), "held-out": numbers(args.held_out)}
    if set(parts["tune"]) & set(parts["held-out"]):
        sys.exit("--tune and --held-out must not share a conversation")
    split = {name: [convs[n - 1] for n in nums] for name, nums in parts.items()}
    context = () if args.no_context else tuple(float(w) for w in args.context.split(","))
    setting = Setting(args.k1, args.b, context, args.session, args.speaker, not args.no_stop_words)
    if args.search:
        from locomo_search import search  # bench/ is on sys.path: run as a script

        search(split["tune"], split["held-out"], lambda s, c: quality(c, Tuned(s)), setting)
    else:
        print(f"### LoCoMo evidence recall, {path.name}: {setting}, dense {args.dense or 'no'}\n")
        if not args.index_only and args.dense is None:
            print("Through the public API: Memory.store_memory / Memory.recall, SQLite.\n")
        for name, part in split.items():
            recall = measure(part, setting, args.index_only, args.dense)
            recall.table(f"#### {name}: conversations {getattr(args, name.replace('-', '_'))}")
    if args.cost:
        from locomo_cost import cost

        print("### Cost, one user\n")
        pool = [(r.data["speaker"], r.data["text"]) for records, _ in convs for r in records]
        queries = [qa["q"] for _, questions in convs for qa in questions]
        cost(pool, queries, [int(n) for n in args.cost.split(",")])


def measure(
    part: list[Conversation], setting: Setting, index_only: bool, dense: float | None
) -> Recall:
    if dense is not None:
        from nerve.memory.dense import DenseIndex, minilm

        channel = DenseIndex(minilm(), weight=dense)
        c = setting
        return quality(part, SearchIndex(k1=c.k1, b=c.b, context=c.context, dense=channel))
    if not index_only:
        if setting != Setting():
            sys.exit("knobs apply to --index-only; the API runs what nerve ships")
        return through_api(part)
    if setting.shipped():
        return quality(part, SearchIndex(k1=setting.k1, b=setting.b, context=setting.context))
    return quality(part, Tuned(setting))


if __name__ == "__main__":
    main()
