"""Quality of the `when` layers on public data (SPEC GW-5, TP-3). Run: python bench/routing_when.py

Reads ../shared/data (or the directory given): Hinglish-TOP, Dakshina, LoCoMo and the safety
corpora (see its README). The rules were written looking at the even rows of each set; this
reports the odd rows only (`--half even` shows the development half).

    language      the match rule of router/understand.py ("any detected language is listed")
                  against the stricter "the first detected language is listed"
    multilingual  share of texts the task calls not English
    code          share of texts with a code cue: recall on commands and SQL, false alarms on
                  conversation (Hinglish queries, LoCoMo turns and questions, Dakshina)
    reasoning     false alarms on the same conversation (there is no labelled reasoning set
                  here: its recall is only the hand-written asks of bench/routing.py, which the
                  cues were written after seeing)
    pii           false alarms on every set (none of them should hold personal data)
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from routing import PARAPHRASES, RULE_ASKS  # bench/ is on sys.path: run as a script

from nerve.config_routes import PII_KINDS
from nerve.gateway.router.pii import find_pii
from nerve.gateway.router.tasks import code_cue, reasoning_cue
from nerve.gateway.router.understand import Reading

INDIC = ("hi", "ta", "te", "kn", "ml", "bn")
DAKSHINA_ROWS = 2000  # of each file's 5,000 sentences


def load(root: Path, odd: bool) -> dict[str, list[str]]:
    start = 1 if odd else 0
    sets: dict[str, list[str]] = {}
    with (root / "language/hinglish_top_validation.tsv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))[start::2]
    sets["hinglish"] = [r["cs_query"] for r in rows]
    sets["hinglish-en"] = [r["en_query"] for r in rows]
    for lang in INDIC:
        for kind in ("roman", "native"):
            path = root / f"language/dakshina/{lang}.dev.{kind}.txt"
            lines = path.read_text(encoding="utf-8").splitlines()[:DAKSHINA_ROWS]
            sets[f"dakshina-{lang}-{kind}"] = lines[start::2]
    conversations = json.loads((root / "locomo/locomo_dev.json").read_text(encoding="utf-8"))
    sessions = [s for c in conversations for k, s in c["conversation"].items()
                if k.startswith("session_") and isinstance(s, list)]  # fmt: skip
    turns = [turn["text"] for session in sessions for turn in session]
    sets["locomo-turns"] = turns[start::2]
    sets["locomo-questions"] = [q["question"] for c in conversations for q in c["qa"]][start::2]
    for name, file in (("nl2bash", "nl2bash_commands"), ("sql", "sql_statements_labeled"),
                       ("shell", "shell_commands_labeled")):  # fmt: skip
        with (root / f"safety/{file}.jsonl").open(encoding="utf-8") as f:
            sets[name] = [json.loads(line)["text"] for line in f][start::2]
    return sets


def share(texts: Sequence[str], test: Callable[[str], bool]) -> str:
    return f"{sum(map(test, texts)) / len(texts):6.1%}"


def language_table(sets: dict[str, list[str]]) -> None:
    print("language routes: share of texts a route for the language takes (any / first)")
    print(f"{'set':<22} {'texts':>6} {'any':>7} {'first':>7}  wrong route (any)")
    rows = [("hinglish", "hi"), ("hinglish-en", None)]
    rows += [(f"dakshina-{lang}-{kind}", lang) for lang in INDIC for kind in ("roman", "native")]
    for name, lang in rows:
        texts = sets[name]
        found = [Reading(t).languages[0] for t in texts]
        if lang is None:  # English: any Indic route taking it is wrong
            anyl = share(found, lambda f: any(g != "en" for g in f))
            first = share(found, lambda f: bool(f) and f[0] != "en")
            print(f"{name:<22} {len(texts):>6} {anyl:>7} {first:>7}  (English: these are wrong)")
            continue
        anyl = share(found, lambda f, lang=lang: lang in f)
        first = share(found, lambda f, lang=lang: bool(f) and f[0] == lang)
        wrong = share(found, lambda f, lang=lang: lang not in f and bool(set(f) - {"en"}))
        print(f"{name:<22} {len(texts):>6} {anyl:>7} {first:>7}  {wrong}")


def task_table(sets: dict[str, list[str]]) -> None:
    code_asks = PARAPHRASES["code"] + RULE_ASKS[:1]
    reasoning_asks = (
        PARAPHRASES["reasoning"] + PARAPHRASES["math"] + RULE_ASKS[4:5] + RULE_ASKS[6:7]
    )
    other_asks = [q for r, qs in PARAPHRASES.items() if r not in ("code", "reasoning", "math")
                  for q in qs]  # fmt: skip
    extra = {"asks: code": code_asks, "asks: reasoning": reasoning_asks, "asks: other": other_asks}
    print("\ntasks: share of texts each task (or the PII check) takes")
    print(f"{'set':<22} {'texts':>6} {'code':>7} {'reason':>7} {'multi':>7} {'pii':>7}")
    names = ["hinglish", "hinglish-en", "locomo-turns", "locomo-questions",
             "dakshina-hi-roman", "dakshina-ta-roman", "nl2bash", "sql", "shell"]  # fmt: skip
    for name, texts in [*((n, sets[n]) for n in names), *extra.items()]:
        code = share(texts, lambda t: code_cue(t) is not None)
        reason = share(texts, lambda t: reasoning_cue(t) is not None)
        multi = share(texts, lambda t: Reading(t).task("multilingual") is not None)
        pii = share(texts, lambda t: find_pii([t], PII_KINDS) is not None)
        print(f"{name:<22} {len(texts):>6} {code:>7} {reason:>7} {multi:>7} {pii:>7}")


def main(argv: Sequence[str] = sys.argv[1:]) -> None:
    parser = argparse.ArgumentParser(description="Quality of routing by language and task.")
    default = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
    parser.add_argument("data", nargs="?", type=Path, default=default)
    parser.add_argument("--half", choices=("odd", "even"), default="odd",
                        help="odd: held out; even: what the rules were written on")  # fmt: skip
    args = parser.parse_args(argv)
    sets = load(args.data, odd=args.half == "odd")
    print(f"{args.half} rows of {args.data}\n")
    language_table(sets)
    task_table(sets)


if __name__ == "__main__":
    main()
