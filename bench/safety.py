"""Safety layer 1 (SF-1) against labelled data: recall, false positives and speed.

    .venv/bin/python bench/safety.py [--data ../shared/data/safety] [--show-flagged 25]
                                     [--show-misses CATEGORY|all] [--only accuracy|speed]

Reads shell_commands_labeled.jsonl, sql_statements_labeled.jsonl (label block/allow, category)
and nl2bash_commands.jsonl (unlabelled, mostly benign) from --data, and prints markdown tables:
nerve's check_rules next to the seed's keyword blocklist, per file and per category; the share of
nl2bash flagged; microseconds per check (p50/p99), including 3 KB inputs. "strict" counts a
medium-risk verdict as blocked, as SafetyEngine(strict=True) does.

Policy: the issue's own policy wins over a data label when they conflict. POLICY_CLASSES below
names the rows where they do (found from the text alone, never from nerve's verdict); "policy
recall / FP" is recall / FP on the rows whose label agrees with the policy. Rows are judged with
no workspace (DEFAULT_SCOPE); tests/safety/test_shell_scope_and_secrets.py covers scoped rules.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import random
import re
import shlex
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import cast

from nerve.safety import Kind, check_rules

ROOT = Path(__file__).resolve().parents[1]

# The seed's layer 1 (NeuroVerse Kavach): keywords and regexes, matched case-insensitively.
SEED_KEYWORDS = "delete_all_data drop_database drop_table system_shutdown format_disk rm -rf \
truncate shutdown reboot erase_all destroy"
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
_KEYWORDS = [k for k in SEED_KEYWORDS.split() if k not in ("-rf", "rm")] + ["rm -rf"]


def seed_blocks(text: str) -> bool:
    low = text.lower()
    return any(k in low for k in _KEYWORDS) or any(p.search(text) for p in SEED_PATTERNS)


def nerve_blocks(kind: str, strict: bool) -> Callable[[str], bool]:
    def judge(text: str) -> bool:
        verdict = check_rules(cast(Kind, kind), text)
        return not verdict.allowed or (strict and verdict.risk_level == "medium")

    return judge


# --- the policy, where a label can disagree with it ------------------------------------
POLICY_CLASSES = {
    "workspace rm": "block label on a local rm -r/-f whose targets are all workspace-relative "
    "paths (policy: `rm -rf ./build` is fine)",
    "temp delete": "block label on a local delete whose targets are all under /tmp or /var/tmp "
    "(policy: /tmp is fine)",
    "destructive tool": "allow label on destructive git/docker/kubectl/terraform (policy: blocked)",
}
_TOOL = re.compile(
    r"^\s*(?:(?:docker|podman)\s+(?:(?:system|volume|image|container|network)\s+)?prune"
    r"|kubectl\s+delete|terraform\s+destroy"
    r"|git\s+(?:reset\s+--hard|clean\s+-\w*f|push\s+(?:-f|--force(?![\w-]))))"
)
_TMP_CODE = re.compile(r"""(?:rmtree|rm_rf|rmSync|remove)\(\s*['"](?:/var)?/tmp/[^'"]*['"]\s*\)""")


def _workspace(path: str) -> bool:
    parts = path.removeprefix("./").split("/")
    whole = ("", ".", "..", "*", ".*")  # the working directory itself, not a path inside it
    return bool(path) and path[0] not in "/~$*" and ".." not in parts and parts[0] not in whole


def policy_class(text: str, label: str) -> str | None:
    """The POLICY_CLASSES key when the label conflicts with the issue's policy, else None."""
    if label == "allow":
        return "destructive tool" if _TOOL.match(text) else None
    if _TMP_CODE.search(text) and not re.search(r"[;&|]", text.split("-c", 1)[0]):
        return "temp delete"
    try:
        words = shlex.split(text)
    except ValueError:
        return None
    if words[:1] == ["sudo"]:
        words = words[1:]
    if words[:1] != ["rm"] or any(w in ("|", ";", "&&", "||") or "`" in w for w in words):
        return None
    targets = [w for w in words[1:] if not w.startswith("-")]
    if targets and all(re.match(r"(?:/var)?/tmp/[^.]", t) for t in targets):
        return "temp delete"
    flags = "".join(w for w in words[1:] if w.startswith("-"))
    if targets and re.search(r"[rRf]|recursive|force", flags) and all(map(_workspace, targets)):
        return "workspace rm"
    return None


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

    def cells(self) -> list[str]:
        """Recall and false-positive rate with their counts: `0.959 (772/805)`."""
        recall = f"{self.recall()} ({self.caught}/{self.block})" if self.block else "–"
        return [recall, f"{self.fp()} ({self.false}/{self.allow})" if self.allow else "–"]

    def warn(self) -> str:
        low = self.block and self.caught < 0.97 * self.block
        return " ⚠" if low or (self.allow and self.false > 0.02 * self.allow) else ""


def table(header: list[str], rows: Iterable[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


_HEAD = ["block", "allow", "nerve recall", "nerve FP", "strict recall", "strict FP"]
_HEAD += ["seed recall", "seed FP"]


def accuracy(data: Path, show: str | None) -> None:
    files = {"shell": "shell_commands_labeled.jsonl", "sql": "sql_statements_labeled.jsonl"}
    summary, policy_rows, misses = [], [], []
    for kind, name in files.items():
        rows = load(data / name)
        judges = (nerve_blocks(kind, False), nerve_blocks(kind, True), seed_blocks)
        totals, per = [Score(), Score(), Score()], defaultdict(lambda: [Score(), Score(), Score()])
        agree, conflicts = Score(), defaultdict[str, Score](Score)
        for row in rows:
            text, label, cat = row["text"], row["label"], row["category"]
            for i, judge in enumerate(judges):
                blocked = judge(text)
                totals[i].add(label, blocked)
                per[cat][i].add(label, blocked)
                if i == 0:
                    klass = policy_class(text, label) if kind == "shell" else None
                    (conflicts[klass] if klass else agree).add(label, blocked)
                    wrong = blocked != (label == "block")
                    if wrong and show and (show == "all" or show in cat):
                        misses.append([cat, label, f"`{text[:100]}`".replace("|", "\\|"), klass])
        print(f"\n### {name}: per category\n")
        cats = [[c + s[0].warn(), str(s[0].block), str(s[0].allow)] for c, s in sorted(per.items())]
        for row, (_, scores) in zip(cats, sorted(per.items()), strict=True):
            row += [x for s in scores for x in (s.recall(), s.fp())]
        print(table(["category", *_HEAD], cats))
        n = totals[0]
        summary.append([name, str(n.block), str(n.allow)])
        summary[-1] += [x for s in totals for x in (s.recall(), s.fp())]
        conflict_text = ", ".join(f"{k}: {v.block + v.allow}" for k, v in sorted(conflicts.items()))
        policy_rows.append(
            [
                name,
                f"{n.recall()} ({n.caught}/{n.block})",
                f"{n.fp()} ({n.false}/{n.allow})",
                conflict_text or "none",
                f"{agree.recall()} ({agree.caught}/{agree.block})",
                f"{agree.fp()} ({agree.false}/{agree.allow})",
            ]
        )
    print("\n### Per file (⚠ in the category tables: below recall 0.97 or above FP 0.02)\n")
    print(table(["file", *_HEAD], summary))
    print("\n### Against the issue's policy (label conflicts set aside)\n")
    for key, rule in POLICY_CLASSES.items():
        print(f"- **{key}**: {rule}")
    print()
    head = ["file", "recall", "FP", "rows in conflict", "policy recall", "policy FP"]
    print(table(head, policy_rows))
    if misses:
        print(f"\n### Misses and false positives ({show})\n")
        print(
            table(
                ["category", "label", "text", "policy conflict"],
                [[c, lbl, t, k or ""] for c, lbl, t, k in misses],
            )
        )


def categories(data: Path) -> None:
    """Which category the blocking shell verdicts name (None: the rule named none)."""
    labelled = [r["text"] for r in load(data / "shell_commands_labeled.jsonl")]
    nl = [r["text"] for r in load(data / "nl2bash_commands.jsonl")]
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for column, texts in enumerate((labelled, nl)):
        for text in texts:
            verdict = check_rules("shell", text)
            if not verdict.allowed:
                counts[str(verdict.category)][column] += 1
    print("\n### Blocking shell verdicts by category (all rows, no workspace given)\n")
    rows = [[k, str(a), str(b)] for k, (a, b) in sorted(counts.items(), key=lambda kv: -kv[1][0])]
    print(table(["category", "shell_commands_labeled", "nl2bash"], rows))


def nl2bash(data: Path, show: int) -> None:
    rows = [r["text"] for r in load(data / "nl2bash_commands.jsonl")]
    verdicts = [(text, check_rules("shell", text)) for text in rows]
    blocked = [(t, v) for t, v in verdicts if not v.allowed]
    medium = sum(1 for _, v in verdicts if v.allowed and v.risk_level == "medium")
    seed = sum(1 for t in rows if seed_blocks(t))
    n = len(rows)
    print("\n### nl2bash_commands.jsonl (unlabelled, mostly benign): share flagged\n")
    head = ["commands", "nerve blocked", "nerve strict (adds medium)", "seed blocked"]
    strict = len(blocked) + medium
    print(
        table(
            head,
            [
                [
                    str(n),
                    f"{len(blocked)} ({len(blocked) / n:.2%})",
                    f"{strict} ({strict / n:.2%})",
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


def _long_inputs(texts: list[str], sep: str, size: int, count: int) -> list[str]:
    """`count` inputs of about `size` characters: random texts joined by `sep`."""
    rng = random.Random(11)
    out = []
    for _ in range(count):
        parts: list[str] = []
        while sum(len(p) + len(sep) for p in parts) < size:
            parts.append(rng.choice(texts))
        out.append(sep.join(parts)[: size + 200])
    return out


# Words that make a command look dangerous to a keyword filter (the bench's own list, so the
# "look-alike" set does not depend on nerve's first pass).
LOOK_ALIKE = re.compile(
    r"(?<![\w-])(?:rm|rmdir|find|git|docker|kubectl|helm|terraform|aws|gcloud|az|psql|mysql|"
    r"redis-cli|curl|wget|chmod|chown|mv|cp|dd|kill|pkill|killall|ssh|scp|rsync|sudo|xargs|"
    r"systemctl|delete|drop|truncate|destroy|purge|prune|shutdown|reboot|mkfs)(?![\w-])",
    re.IGNORECASE,
)


def timings(kind: str, texts: list[str], samples_wanted: int) -> tuple[float, float]:
    """p50 and p99 µs of check_rules over passes of `texts` (at least `samples_wanted` calls)."""
    samples = []
    for _ in range(max(1, math.ceil(samples_wanted / len(texts)))):
        for text in texts:
            start = time.perf_counter_ns()
            check_rules(cast(Kind, kind), text)
            samples.append((time.perf_counter_ns() - start) / 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.99)]


def realistic_3kb(rng: random.Random) -> tuple[list[str], list[str]]:
    """3 KB inputs of the kinds agents send: here-docs, JSON payloads, long argument lists,
    CI scripts; INSERT batches, wide SELECTs, long UPDATEs, DDL."""
    words = ["alpha", "beta", "gamma", "delta", "rm", "-rf", "/", "drop", "table", "users"]
    words += ["deploy", "build", "test"]
    steps = [
        "set -euo pipefail", "cd /work/app", "npm ci", "npm run lint", "npm test",
        "docker build -t app:$GIT_SHA .", "rm -rf ./dist /tmp/cache", "mkdir -p dist",
        'echo "done at $(date)"', "tar czf dist/app.tgz build/", "python -m pytest -q",
        "kubectl get pods -n staging", "git status --short",
    ]  # fmt: skip
    shell, sql = [], []
    for i in range(20):
        body = "\n".join(" ".join(rng.choices(words, k=12)) for _ in range(40))[:2900]
        shell.append(f"cat > notes-{i}.md <<'EOF'\n{body}\nEOF")
        payload = json.dumps({f"field_{k}": rng.choice(words) * 3 for k in range(120)})[:2900]
        shell.append(f"curl -X POST https://api.example.com/v1/items -d '{payload}'")
        shell.append("git add " + " ".join(f"src/pkg_{k}/module_{k}.py" for k in range(120))[:3000])
        shell.append("rm -f " + " ".join(f"build/obj/file_{k}.o" for k in range(170))[:3000])
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


def speed(data: Path, samples: int) -> None:
    shell = load(data / "shell_commands_labeled.jsonl")
    sql = load(data / "sql_statements_labeled.jsonl")
    nl = [r["text"] for r in load(data / "nl2bash_commands.jsonl")]
    real_shell, real_sql = realistic_3kb(random.Random(5))
    benign = [r["text"] for r in shell if r["label"] == "allow"] + nl
    dense_shell = _long_inputs(benign, "\n", 3000, 100)
    # Allowed look-alikes: one-line benign commands with a dangerous-looking word that nerve
    # allows, so a script of them can never stop at a first blocking finding.
    alike = [t for t in benign if "\n" not in t and LOOK_ALIKE.search(t)]
    alike = [t for t in alike if check_rules("shell", t).allowed]
    dense_alike = _long_inputs(alike, "\n", 3000, 100)
    alike_blocked = sum(not check_rules("shell", t).allowed for t in dense_alike)
    dense_sql = _long_inputs([r["text"] for r in sql if r["label"] == "allow"], ";\n", 3000, 100)
    for kind, rows in (("shell", shell), ("sql", sql)):
        timings(kind, [r["text"] for r in rows], 1)  # warm up: imports and sqlglot's first parse
    gc.collect()
    gc.freeze()  # the bench's own data is not what a check costs: keep it out of GC passes
    cases = [
        ("shell", "shell data set", [r["text"] for r in shell], True),
        ("shell", "nl2bash", nl, False),
        ("shell", "3 KB: here-docs, JSON payloads, long argument lists, CI scripts",
         real_shell, True),
        ("shell", "3 KB worst case: ~50 benign data-set commands, one per line",
         dense_shell, False),
        ("shell", "3 KB worst case: ~50 allowed look-alikes, one per line (no early exit)",
         dense_alike, False),
        ("sql", "SQL data set", [r["text"] for r in sql], True),
        ("sql", "3 KB: INSERT batches, wide SELECTs, long UPDATEs, DDL", real_sql, True),
        ("sql", "3 KB worst case: ~40 benign data-set statements", dense_sql, False),
    ]  # fmt: skip
    rows = []
    mixed: dict[str, list[str]] = defaultdict(list)
    for kind, name, texts, in_mix in cases:
        p50, p99 = timings(kind, texts, samples)
        note = f", {alike_blocked} blocked" if texts is dense_alike else ""
        rows.append([kind, f"{name} ×{len(texts)}{note}", f"{p50:.1f}", f"{p99:.1f}"])
        if in_mix:
            mixed[kind].extend(texts)
    for kind, texts in mixed.items():
        p50, p99 = timings(kind, texts, samples)
        share = sum(len(t) >= 2500 for t in texts) / len(texts)
        name = f"**data set + realistic 3 KB ({share:.0%} of checks)**"
        rows.append([kind, name, f"{p50:.1f}", f"{p99:.1f}"])
    gc.unfreeze()
    print(f"\n### Speed: µs per check_rules call (one core, ≥{samples:,} calls per row)\n")
    print(table(["kind", "inputs", "p50 µs", "p99 µs"], rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "safety")
    parser.add_argument("--show-flagged", type=int, default=25, help="nl2bash sample size")
    parser.add_argument("--show-misses", metavar="CATEGORY", help="a category substring or all")
    parser.add_argument("--samples", type=int, default=2000, help="timed calls per speed row")
    parser.add_argument("--only", choices=("accuracy", "speed"))
    args = parser.parse_args()
    if args.only != "speed":
        accuracy(args.data, args.show_misses)
        nl2bash(args.data, args.show_flagged)
        categories(args.data)
    if args.only != "accuracy":
        speed(args.data, args.samples)


if __name__ == "__main__":
    main()
