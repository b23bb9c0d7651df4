"""Safety layer 1 (SF-1) against labelled data: recall, false positives and speed.

    .venv/bin/python bench/safety.py [--data ../shared/data/safety] [--show-flagged 25]

Reads shell_commands_labeled.jsonl, sql_statements_labeled.jsonl (label block/allow, category)
and nl2bash_commands.jsonl (unlabelled, mostly benign) from --data, and prints markdown tables:
nerve's check_rules next to the seed's keyword blocklist, per file and per category; the share of
nl2bash flagged; microseconds per check (p50/p99), including 3 KB inputs. "strict" counts a
medium-risk verdict as blocked, as SafetyEngine(strict=True) does.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import cast

from nerve.safety import Kind, check_rules

ROOT = Path(__file__).resolve().parents[1]

# The seed's layer 1 (NeuroVerse Kavach): keywords and regexes, matched case-insensitively.
SEED_KEYWORDS = (
    "delete_all_data drop_database drop_table system_shutdown format_disk rm -rf truncate "
    "shutdown reboot erase_all destroy"
)
SEED_PATTERNS = [
    re.compile(p, re.IGNORECASE)
    for p in (
        r"DROP\s+(DATABASE|TABLE|SCHEMA)",
        r"DELETE\s+FROM\s+\*",
        r"TRUNCATE\s+TABLE",
        r"FORMAT\s+[A-Z]:",
        r"rm\s+(-rf|--force)",
    )
]
_KEYWORDS = [k for k in SEED_KEYWORDS.split() if k != "-rf"] + ["rm -rf"]
_KEYWORDS = [k for k in _KEYWORDS if k != "rm"]


def seed_blocks(text: str) -> bool:
    low = text.lower()
    return any(k in low for k in _KEYWORDS) or any(p.search(text) for p in SEED_PATTERNS)


def nerve_blocks(kind: str, strict: bool) -> Callable[[str], bool]:
    def judge(text: str) -> bool:
        verdict = check_rules(cast(Kind, kind), text)
        return not verdict.allowed or (strict and verdict.risk_level == "medium")

    return judge


def load(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


class Score:
    def __init__(self) -> None:
        self.block = self.caught = self.allow = self.false = 0

    def add(self, label: str, blocked: bool) -> None:
        if label == "block":
            self.block += 1
            self.caught += blocked
        else:
            self.allow += 1
            self.false += blocked

    def recall(self) -> str:
        return f"{self.caught / self.block:.3f}" if self.block else "–"

    def fp(self) -> str:
        return f"{self.false / self.allow:.3f}" if self.allow else "–"


def score(
    rows: list[dict[str, str]], judge: Callable[[str], bool]
) -> tuple[Score, dict[str, Score]]:
    total, per = Score(), defaultdict[str, Score](Score)
    for row in rows:
        blocked = judge(row["text"])
        total.add(row["label"], blocked)
        per[row["category"]].add(row["label"], blocked)
    return total, per


def table(header: list[str], rows: Iterable[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def accuracy(data: Path) -> None:
    files = {"shell": "shell_commands_labeled.jsonl", "sql": "sql_statements_labeled.jsonl"}
    summary: list[list[str]] = []
    for kind, name in files.items():
        rows = load(data / name)
        nerve, nerve_cat = score(rows, nerve_blocks(kind, strict=False))
        strict, strict_cat = score(rows, nerve_blocks(kind, strict=True))
        seed, seed_cat = score(rows, seed_blocks)
        summary.append(
            [
                name,
                str(nerve.block),
                str(nerve.allow),
                nerve.recall(),
                nerve.fp(),
                strict.recall(),
                strict.fp(),
                seed.recall(),
                seed.fp(),
            ]
        )
        print(f"\n### {name}: per category\n")
        cats = []
        for cat in sorted(nerve_cat):
            n, s, b = nerve_cat[cat], strict_cat[cat], seed_cat[cat]
            flag = (
                " ⚠"
                if (n.block and n.caught < 0.97 * n.block) or (n.allow and n.false > 0.02 * n.allow)
                else ""
            )
            cats.append(
                [
                    cat + flag,
                    str(n.block),
                    str(n.allow),
                    n.recall(),
                    n.fp(),
                    s.recall(),
                    s.fp(),
                    b.recall(),
                    b.fp(),
                ]
            )
        print(
            table(
                [
                    "category",
                    "block",
                    "allow",
                    "nerve recall",
                    "nerve FP",
                    "strict recall",
                    "strict FP",
                    "seed recall",
                    "seed FP",
                ],
                cats,
            )
        )
    print("\n### Per file (⚠ in the category tables: below recall 0.97 or above FP 0.02)\n")
    print(
        table(
            [
                "file",
                "block",
                "allow",
                "nerve recall",
                "nerve FP",
                "strict recall",
                "strict FP",
                "seed recall",
                "seed FP",
            ],
            summary,
        )
    )


def nl2bash(data: Path, show: int) -> None:
    rows = [r["text"] for r in load(data / "nl2bash_commands.jsonl")]
    verdicts = [(text, check_rules("shell", text)) for text in rows]
    blocked = [(t, v) for t, v in verdicts if not v.allowed]
    medium = sum(1 for _, v in verdicts if v.allowed and v.risk_level == "medium")
    seed = sum(1 for t in rows if seed_blocks(t))
    n = len(rows)
    print("\n### nl2bash_commands.jsonl (unlabelled, mostly benign): share flagged\n")
    print(
        table(
            ["commands", "nerve blocked", "nerve strict (adds medium)", "seed blocked"],
            [
                [
                    str(n),
                    f"{len(blocked)} ({len(blocked) / n:.2%})",
                    f"{len(blocked) + medium} ({(len(blocked) + medium) / n:.2%})",
                    f"{seed} ({seed / n:.2%})",
                ]
            ],
        )
    )
    if show:
        print(f"\nA random sample of {show} blocked nl2bash commands:\n")
        sample = random.Random(7).sample(blocked, min(show, len(blocked)))
        print(
            table(
                ["command", "risk", "reason"],
                [
                    [
                        f"`{t[:90]}`".replace("|", "\\|"),
                        v.risk_level,
                        v.reason[:90].replace("|", "\\|"),
                    ]
                    for t, v in sample
                ],
            )
        )


def _long_inputs(rows: list[dict[str, str]], sep: str, size: int, count: int) -> list[str]:
    rng = random.Random(11)
    texts = [r["text"] for r in rows if r["label"] == "allow"]
    out = []
    for _ in range(count):
        parts: list[str] = []
        while sum(len(p) + len(sep) for p in parts) < size:
            parts.append(rng.choice(texts))
        out.append(sep.join(parts)[: size + 200])
    return out


def timings(kind: str, texts: list[str], repeat: int) -> tuple[float, float]:
    samples = []
    for _ in range(repeat):
        for text in texts:
            start = time.perf_counter_ns()
            check_rules(cast(Kind, kind), text)
            samples.append((time.perf_counter_ns() - start) / 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.99)]


def realistic_3kb(rng: random.Random) -> tuple[list[str], list[str]]:
    """3 KB inputs of the kinds agents send: here-docs, JSON payloads, long argument lists,
    CI scripts; INSERT batches, wide SELECTs, long UPDATEs, DDL."""
    words = [
        "alpha",
        "beta",
        "gamma",
        "delta",
        "rm",
        "-rf",
        "/",
        "drop",
        "table",
        "users",
        "deploy",
        "build",
        "test",
    ]
    shell, sql = [], []
    for i in range(20):
        body = "\n".join(" ".join(rng.choices(words, k=12)) for _ in range(40))[:2900]
        shell.append(f"cat > notes-{i}.md <<'EOF'\n{body}\nEOF")
        payload = json.dumps({f"field_{k}": rng.choice(words) * 3 for k in range(120)})[:2900]
        shell.append(f"curl -X POST https://api.example.com/v1/items -d '{payload}'")
        shell.append("git add " + " ".join(f"src/pkg_{k}/module_{k}.py" for k in range(120))[:3000])
        shell.append("rm -f " + " ".join(f"build/obj/file_{k}.o" for k in range(170))[:3000])
        steps = [
            "set -euo pipefail",
            "cd /work/app",
            "npm ci",
            "npm run lint",
            "npm test",
            "docker build -t app:$GIT_SHA .",
            "rm -rf ./dist /tmp/cache",
            "mkdir -p dist",
            'echo "done at $(date)"',
            "tar czf dist/app.tgz build/",
            "python -m pytest -q",
            "kubectl get pods -n staging",
            "git status --short",
        ]
        shell.append("\n".join(rng.choice(steps) for _ in range(150))[:3000])
        rows = ", ".join(f"({k}, 'name {k}', {k * 3}, '2026-01-01')" for k in range(90))
        sql.append(f"INSERT INTO events (id, name, score, day) VALUES {rows}"[:3000])
        cols = ", ".join(f"t.col_{k} AS c{k}" for k in range(140))
        sql.append(f"SELECT {cols} FROM t JOIN u ON t.id = u.tid WHERE t.day > '2026-01-01'")
        sets = ", ".join(f"col_{k} = col_{k} + {k}" for k in range(170))
        sql.append(f"UPDATE stats SET {sets} WHERE id = {i}"[:3000] + f" WHERE id = {i}")
        ddl = ", ".join(f"col_{k} VARCHAR(64) NOT NULL DEFAULT ''" for k in range(80))
        sql.append(f"CREATE TABLE wide_{i} (id INT PRIMARY KEY, {ddl})"[:3000])
    return shell, sql


def speed(data: Path, repeat: int) -> None:
    shell = load(data / "shell_commands_labeled.jsonl")
    sql = load(data / "sql_statements_labeled.jsonl")
    nl = [{"text": r["text"], "label": "allow"} for r in load(data / "nl2bash_commands.jsonl")]
    real_shell, real_sql = realistic_3kb(random.Random(5))
    dense_shell = _long_inputs(shell + nl, "\n", 3000, 40)
    dense_sql = _long_inputs(sql, ";\n", 3000, 40)
    for kind, texts in (("shell", [r["text"] for r in shell]), ("sql", [r["text"] for r in sql])):
        timings(kind, texts, 1)  # warm up: imports and sqlglot's first parse
    cases = [
        ("shell", "shell data set (1,810)", [r["text"] for r in shell], True),
        ("shell", "nl2bash (12,607)", [r["text"] for r in nl], False),
        (
            "shell",
            "3 KB: here-docs, JSON payloads, long argument lists, CI scripts",
            real_shell,
            True,
        ),
        ("shell", "3 KB worst case: ~50 data-set commands, one per line", dense_shell, False),
        ("sql", "SQL data set (786)", [r["text"] for r in sql], True),
        ("sql", "3 KB: INSERT batches, wide SELECTs, long UPDATEs, DDL", real_sql, True),
        ("sql", "3 KB worst case: ~40 data-set statements", dense_sql, False),
    ]
    rows = []
    mixed: dict[str, list[str]] = defaultdict(list)
    for kind, name, texts, in_mix in cases:
        p50, p99 = timings(kind, texts, 1 if len(texts) > 5000 else repeat)
        rows.append([kind, name, f"{p50:.1f}", f"{p99:.1f}"])
        if in_mix:
            mixed[kind].extend(texts)
    for kind, texts in mixed.items():
        p50, p99 = timings(kind, texts, repeat)
        share = sum(len(t) >= 2500 for t in texts) / len(texts)
        rows.append(
            [
                kind,
                f"**data set + realistic 3 KB ({share:.0%} of checks)**",
                f"{p50:.1f}",
                f"{p99:.1f}",
            ]
        )
    print("\n### Speed: µs per check_rules call (one core)\n")
    print(table(["kind", "inputs", "p50 µs", "p99 µs"], rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "safety")
    parser.add_argument("--show-flagged", type=int, default=25, help="nl2bash sample size")
    parser.add_argument("--repeat", type=int, default=3, help="timing passes per input set")
    args = parser.parse_args()
    accuracy(args.data)
    nl2bash(args.data, args.show_flagged)
    speed(args.data, args.repeat)


if __name__ == "__main__":
    main()
