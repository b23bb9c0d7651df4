"""Intent rules on Hinglish-TOP and on text that is no command (SPEC IN-2, RT-2).
Run: python bench/intent.py [--data DIR] [--no-false-triggers]

Reads hinglish_top_validation.tsv (romanized Hindi-English queries and their English originals,
each with a TOP parse) from --data, by default ../shared/data/language next to the repo; the data
is never copied into the repo. TOP intents are mapped onto nerve's where they correspond, the rest
are excluded from accuracy (and their count printed). Prints accuracy per column and per class,
the most frequent confusions, then µs per `classify_rules` call on raw text (p50/p99, median of
several runs).

The rules read the raw text and, when `nerve.language` is importable, also each query passed
through `detect`: its `.normalized_text` with its `.languages`, and (`pipeline`, what
IntentClassifier does) the text as written with its `.languages`. The output says which it did.

False triggers (RT-2): the share of non-commands given an intent other than chat/unknown, and of
those given a destructive one (high or critical risk in safety's INTENT_RISK, or an action hint),
with the commonest wrong intents, per source. Sources, none copied into the repo: Dakshina
romanized Wikipedia sentences (<shared>/language/dakshina/<lang>.dev.roman.txt; lines 1-2500
are the tune split, 2501-5000 held out), LoCoMo conversation turns (<shared>/locomo/
locomo_dev.json, CC BY-NC, read here only; conversations 1-3 tune, 4-5 held out) and
bench/data/heldout/chat.txt (a held-out chit-chat set written by someone else; its figure is
only reported, skipped when absent), and, when the `chitchat_dataset` package is importable
(`pip install chitchat_dataset`, MIT: real English chat turns from the BYU PCC lab's Chit-Chat
Challenge; never a dependency of nerve, or pass --chitchat PATH to its dataset.json), CHITCHAT_ROWS
turns from every 20th conversation as tune and from the 10th of every 20 as held out. Targets:
false triggers <= 3%, destructive 0.
"""

from __future__ import annotations

import argparse
import csv
import gc
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from nerve.intent import classify_rules
from nerve.safety.risk import INTENT_RISK

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "language"
FILE = "hinglish_top_validation.tsv"
MAPPING_RULES = [
    ("IN:SEND_MESSAGE", "send_message"),
    ("IN:GET_*", "query_data"),
    ("IN:DELETE_*", "delete_data"),
]
TARGET = 0.85
FALSE_TRIGGER_TARGET = 0.03
DAKSHINA = ("hi", "bn", "ta", "te", "kn", "ml")
SPLITS = {"tune": (0, 2500), "held-out": (2500, 5000)}
LOCOMO_TUNE = 3  # conversations 1-3 tune, the rest held out (as bench/locomo.py splits them)
HELDOUT_CHAT = REPO / "bench" / "data" / "heldout" / "chat.txt"
NOT_TRIGGERS = ("chat", "unknown")
CHITCHAT_SPLITS = {"tune": 0, "held-out": 10}  # conversation index mod 20
CHITCHAT_ROWS = 5000

Prepare = Callable[[str], tuple[str, Sequence[str]]]


def map_top(top: str) -> str | None:
    """nerve's intent for a TOP intent, or None when none corresponds."""
    for pattern, ours in MAPPING_RULES:
        if top == pattern or (pattern.endswith("*") and top.startswith(pattern[:-1])):
            return ours
    return None


def top_intent(parse: str) -> str:
    return parse.split()[0].lstrip("[")


def raw(text: str) -> tuple[str, Sequence[str]]:
    return text, ()


def normalizer() -> tuple[Prepare | None, str]:
    """nerve.language's reading of a text when the package is there and works, and why not."""
    try:
        from nerve.language import detect

        detect("Priya ko message bhejo")  # fail here, once, rather than mid-run
    except Exception as exc:  # a package being written in parallel may be broken: say so
        return None, f"{type(exc).__name__}: {exc}"

    def prepare(text: str) -> tuple[str, Sequence[str]]:
        result = detect(text)
        return result.normalized_text, tuple(result.languages)

    return prepare, ""


def detected(text: str) -> tuple[str, Sequence[str]]:
    """What the pipeline's rules read (IntentClassifier): the text as written, its languages."""
    from nerve.language import detect

    return text, tuple(detect(text).languages)


def load(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


def evaluate(
    rows: list[dict[str, str]], column: str, prepare: Prepare
) -> tuple[Counter[str], Counter[str], Counter[tuple[str, str]]]:
    """(hits per class, rows per class, confusions) of the rules on one column."""
    parse_col = "cs_parse" if column == "cs_query" else "en_parse"
    hits: Counter[str] = Counter()
    totals: Counter[str] = Counter()
    confusions: Counter[tuple[str, str]] = Counter()
    for row in rows:
        gold = map_top(top_intent(row[parse_col]))
        if gold is None:
            continue
        text, languages = prepare(row[column])
        got = classify_rules(text, languages=languages).intent
        totals[gold] += 1
        if got == gold:
            hits[gold] += 1
        else:
            confusions[(gold, got)] += 1
    return hits, totals, confusions


def accuracy_table(rows: list[dict[str, str]], readings: list[tuple[str, Prepare]]) -> None:
    classes = [ours for _, ours in MAPPING_RULES]
    print(
        f"\n{'column':<9} {'rules read':<11} {'accuracy':>15}  "
        + "  ".join(f"{c:>13}" for c in classes)
    )
    worst: Counter[tuple[str, str]] = Counter()
    for column in ("cs_query", "en_query"):
        for name, prepare in readings:
            hits, totals, confusions = evaluate(rows, column, prepare)
            hit, total = sum(hits.values()), sum(totals.values())
            mark = "" if hit / total >= TARGET else "  BELOW TARGET"
            per_class = "  ".join(f"{hits[c] / totals[c]:>13.1%}" for c in classes)
            print(f"{column:<9} {name:<11} {hit:>4}/{total} {hit / total:>6.1%}  {per_class}{mark}")
            if name == readings[-1][0]:
                worst.update(confusions)
    print(
        f"target: {TARGET:.0%} per column. Most frequent confusions (gold -> rules), both columns:"
    )
    for (gold, got), n in worst.most_common(6):
        print(f"  {gold} -> {got}: {n}")


def excluded_readings(rows: list[dict[str, str]], prepare: Prepare) -> None:
    """What the rules make of rows with no counterpart (alarms, music...): not scored."""
    seen: Counter[str] = Counter()
    for row in rows:
        if map_top(top_intent(row["cs_parse"])) is None:
            text, languages = prepare(row["cs_query"])
            seen[classify_rules(text, languages=languages).intent] += 1
    shown = ", ".join(f"{k} {v}" for k, v in seen.most_common())
    print(f"\nexcluded cs_query rows, read as (informational, not scored): {shown}")


def timing(texts: list[str], runs: int = 5) -> None:
    p50s, p99s = [], []
    for _ in range(runs):
        gc.collect()
        samples = []
        for text in texts:
            t0 = time.perf_counter_ns()
            classify_rules(text)
            samples.append((time.perf_counter_ns() - t0) / 1000)
        samples.sort()
        p50s.append(samples[len(samples) // 2])
        p99s.append(samples[int(len(samples) * 0.99)])
    print(
        f"\nclassify_rules over {len(texts)} queries x {runs} runs: "
        f"p50 {statistics.median(p50s):.1f} µs, p99 {statistics.median(p99s):.1f} µs"
    )


def dakshina(data: Path, lang: str, split: str) -> list[str]:
    path = data / "dakshina" / f"{lang}.dev.roman.txt"
    lo, hi = SPLITS[split]
    lines = path.read_text(encoding="utf-8").splitlines()[lo:hi]
    return [line for line in lines if line.strip()]


def locomo(path: Path, split: str) -> list[str]:
    import json

    conversations = json.loads(path.read_text(encoding="utf-8"))
    part = conversations[:LOCOMO_TUNE] if split == "tune" else conversations[LOCOMO_TUNE:]
    return [
        turn["text"]
        for conv in part
        for key, session in conv["conversation"].items()
        if key.startswith("session_") and isinstance(session, list)
        for turn in session
        if turn.get("text")
    ]


def chitchat_path() -> Path | None:
    """dataset.json of the chitchat_dataset package when it is installed (not imported: it
    loads 40 MB on import)."""
    import importlib.util

    spec = importlib.util.find_spec("chitchat_dataset")
    origin = spec.origin if spec else None
    return Path(origin).parent / "dataset.json" if origin else None


def chitchat(path: Path, split: str) -> list[str]:
    """Chat turns of whole conversations, every 20th from CHITCHAT_SPLITS[split] on."""
    import json

    conversations = json.loads(path.read_text(encoding="utf-8"))
    turns: list[str] = []
    for i, conv in enumerate(conversations.values()):
        if i % 20 != CHITCHAT_SPLITS[split]:
            continue
        turns += [m["text"] for turn in conv["messages"] for m in turn if m["text"].strip()]
        if len(turns) >= CHITCHAT_ROWS:
            break
    return turns


def destructive(intent: str, parameters: dict[str, object]) -> bool:
    action = parameters.get("action")
    risky = INTENT_RISK.get(str(action)) if action else None
    return risky in ("high", "critical") or INTENT_RISK.get(intent) in ("high", "critical")


def triggers(texts: list[str], prepare: Prepare) -> tuple[int, int, Counter[str]]:
    """(rows given an intent, rows given a destructive one, wrong intents) on non-commands."""
    fired, harmful, wrong = 0, 0, Counter[str]()
    for text in texts:
        readable, languages = prepare(text)
        result = classify_rules(readable, languages=languages)
        if result.intent in NOT_TRIGGERS:
            continue
        fired += 1
        wrong[result.intent] += 1
        harmful += destructive(result.intent, result.parameters)
    return fired, harmful, wrong


def false_triggers(
    shared: Path, readings: list[tuple[str, Prepare]], chitchat_json: Path | None
) -> None:
    sources: list[tuple[str, str, list[str]]] = []
    for split in SPLITS:
        for lang in DAKSHINA:
            try:
                sources.append(
                    (f"dakshina {lang}", split, dakshina(shared / "language", lang, split))
                )
            except OSError as exc:
                print(f"skipped dakshina {lang}: {exc}")
        try:
            sources.append(
                ("locomo turns", split, locomo(shared / "locomo" / "locomo_dev.json", split))
            )
        except OSError as exc:
            print(f"skipped locomo: {exc}")
        if chitchat_json is not None:
            try:
                sources.append(("chitchat turns", split, chitchat(chitchat_json, split)))
            except (OSError, ValueError, KeyError) as exc:
                print(f"skipped chitchat: {exc}")
    if chitchat_json is None:
        print("\nskipped chitchat turns: pip install chitchat_dataset, or pass --chitchat PATH")
    if HELDOUT_CHAT.exists():
        lines = HELDOUT_CHAT.read_text(encoding="utf-8").splitlines()
        sources.append(("heldout chat.txt", "held-out", [t for t in lines if t.strip()]))
    else:
        print(f"\nskipped {HELDOUT_CHAT.relative_to(REPO)}: not there (yet)")
    names = [name for name, _ in readings]
    print(
        "\nfalse triggers on non-commands (any intent but chat/unknown; destructive = high or"
        f" critical risk), target <= {FALSE_TRIGGER_TARGET:.0%} and 0 destructive:\n"
        f"{'source':<17} {'split':<9} {'rows':>5}  "
        + "  ".join(f"{n + ' fired':>16} {'destr.':>6}" for n in names)
        + "  top wrong intents (last reading)"
    )
    totals: dict[tuple[str, str], list[int]] = {}
    for source, split, texts in sources:
        cells, wrong = [], Counter[str]()
        for name, prepare in readings:
            fired, harmful, wrong = triggers(texts, prepare)
            cells.append(f"{fired:>6} {fired / len(texts):>8.1%} {harmful:>6}")
            kind = "dakshina" if source.startswith("dakshina") else source
            total = totals.setdefault((f"{kind} {name}", split), [0, 0, 0])
            total[0] += len(texts)
            total[1] += fired
            total[2] += harmful
        flag = "" if fired / len(texts) <= FALSE_TRIGGER_TARGET and not harmful else "  OVER TARGET"
        top = ", ".join(f"{k} {v}" for k, v in wrong.most_common(3))
        print(f"{source:<17} {split:<9} {len(texts):>5}  " + "  ".join(cells) + f"  {top}{flag}")
    for (what, split), (rows, fired, harmful) in totals.items():
        if what.startswith("dakshina"):
            print(f"  all dakshina, {what[9:]}, {split}: {fired}/{rows} = {fired / rows:.1%},"
                  f" destructive {harmful}")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="dir holding " + FILE)
    parser.add_argument(
        "--no-false-triggers", action="store_true", help="skip the non-command (RT-2) section"
    )
    parser.add_argument(
        "--chitchat", type=Path, default=None, help="chitchat_dataset's dataset.json"
    )
    args = parser.parse_args(argv)
    path = args.data / FILE if args.data.is_dir() else args.data
    if not path.exists():
        print(f"no data at {path}: pass --data DIR", file=sys.stderr)
        return 2
    rows = load(path)
    readings: list[tuple[str, Prepare]] = [("raw", raw)]
    normalize, why_not = normalizer()
    if normalize:
        readings += [("normalized", normalize), ("pipeline", detected)]
        how = (
            "raw text; detect(...).normalized_text with .languages; and the pipeline's reading,"
            " the text as written with detect(...).languages"
        )
    else:
        how = f"raw text only (nerve.language is not usable: {why_not})"
    print(f"data: {path} ({len(rows)} rows)\nrules read: {how}")
    print("mapping TOP -> nerve:")
    for pattern, ours in MAPPING_RULES:
        tops = Counter(t for r in rows if map_top(t := top_intent(r["en_parse"])) == ours)
        n = sum(tops.values())
        print(f"  {pattern:<16} -> {ours:<13} {n:>4} rows ({len(tops)} TOP intents)")
    excluded = [r for r in rows if map_top(top_intent(r["en_parse"])) is None]
    kinds = len({top_intent(r["en_parse"]) for r in excluded})
    print(
        f"  everything else  -> excluded      {len(excluded):>4} rows ({kinds} TOP intents:"
        " creating alarms, reminders, timers, playing music... have no nerve counterpart;"
        " REMOVE_FROM_PLAYLIST_MUSIC is mostly 'skip/don't play', not a deletion)"
    )
    accuracy_table(rows, readings)
    excluded_readings(rows, readings[-1][1])
    if not args.no_false_triggers:
        shared = path.parent.parent  # <shared>/language/<FILE> -> <shared>
        false_triggers(shared, readings, args.chitchat or chitchat_path())
    timing([r["cs_query"] for r in rows] + [r["en_query"] for r in rows])
    return 0


if __name__ == "__main__":
    sys.exit(main())
