"""Safety layer 1 against HELD-OUT data: per-category recall and false positives.

    .venv/bin/python bench/safety_heldout.py [--data bench/data/heldout] [--split tune|test|all]
                                             [--show-misses]

The data under --data is held out: it was written by nerve's red team, a separate author who
never read the rules in src/nerve/safety/ (only its public interface: scope, verdict, engine),
and the rule authors never read it. Keep it that way: a rule tuned to these rows makes the
numbers meaningless. See bench/data/heldout/README.md.

Reads shell.jsonl ({"command", "label", "category", "cwd", "roots", "note"}) and sql.jsonl
({"sql", "label", "category", "mode", "dialect", "note"}). Each row is checked with
check_rules(kind, text, Scope.of(cwd=..., roots=... or (), mode=..., dialect=...)); a row is
"blocked" when the verdict's `allowed` is False. Prints, per file, a markdown table of recall on
block rows and false-positive rate on allow rows per category, and the totals. --show-misses
lists the missed block rows and the blocked allow rows with the verdict's reason. chat.txt in
the same directory is used by another bench (the text/intent one), not here.

Splits: after a first measurement on all rows, the rows were split by position — even rows
(0, 2, 4, ... in each file) are the `tune` half, whose misses rule authors may read to find
missing classes of attack; odd rows are the `test` half, never listed: its figure is the
held-out one. --show-misses therefore lists the tune half only.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nerve.safety import Kind, Scope, check_rules

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT / "bench" / "data" / "heldout"


@dataclass(frozen=True, slots=True)
class Result:
    kind: Kind
    category: str
    text: str
    label: str  # "block" | "allow"
    blocked: bool
    reason: str
    where: str  # the scope, for the miss listing

    @property
    def wrong(self) -> bool:
        return self.blocked != (self.label == "block")


SPLITS = ("tune", "test", "all")


def _load(path: Path, split: str = "all") -> list[dict[str, Any]]:
    rows = _read(path)
    if split == "all":
        return rows
    return rows[0::2] if split == "tune" else rows[1::2]


def _read(path: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            row = json.loads(line)
            if row.get("label") not in ("block", "allow"):
                raise SystemExit(f"{path}:{number}: label must be block or allow")
            rows.append(row)
    return rows


def _check(kind: Kind, text: str, scope: Scope, row: dict[str, Any], where: str) -> Result:
    verdict = check_rules(kind, text, scope)
    return Result(
        kind=kind,
        category=str(row["category"]),
        text=text,
        label=str(row["label"]),
        blocked=not verdict.allowed,
        reason=verdict.reason,
        where=where,
    )


def run_shell(path: Path, split: str = "all") -> list[Result]:
    results = []
    for row in _load(path, split):
        cwd = row.get("cwd")
        roots = tuple(row.get("roots") or ())
        scope = Scope.of(cwd=cwd, roots=roots, mode="default")
        where = f"cwd={cwd}" + (f" roots={list(roots)}" if roots else "")
        results.append(_check("shell", str(row["command"]), scope, row, where))
    return results


def run_sql(path: Path, split: str = "all") -> list[Result]:
    results = []
    for row in _load(path, split):
        mode = str(row.get("mode") or "default")
        dialect = str(row.get("dialect") or "any")
        scope = Scope.of(mode=mode, dialect=dialect)
        results.append(_check("sql", str(row["sql"]), scope, row, f"{mode}/{dialect}"))
    return results


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "—"


def table(title: str, results: list[Result]) -> str:
    by_cat: dict[str, list[Result]] = defaultdict(list)
    for r in results:
        by_cat[r.category].append(r)
    lines = [
        f"### {title}",
        "",
        "| category | block rows | recall | allow rows | false positives | FP rate |",
        "|---|---:|---:|---:|---:|---:|",
    ]

    def line(name: str, rs: list[Result]) -> str:
        block = [r for r in rs if r.label == "block"]
        allow = [r for r in rs if r.label == "allow"]
        caught = sum(r.blocked for r in block)
        fps = sum(r.blocked for r in allow)
        return (
            f"| {name} | {len(block)} | {_pct(caught, len(block))} ({caught}) | {len(allow)} "
            f"| {fps} | {_pct(fps, len(allow))} |"
        )

    for name, rs in by_cat.items():
        lines.append(line(name, rs))
    lines.append(line("**total**", results))
    return "\n".join(lines)


def misses(title: str, results: list[Result]) -> str:
    wrong = [r for r in results if r.wrong]
    lines = [f"#### {title}: {len(wrong)} wrong", ""]
    for r in wrong:
        what = "MISS" if r.label == "block" else "FP  "
        text = r.text.replace("\n", "\\n")
        lines.append(f"- {what} [{r.category}] ({r.where}) `{text}` → {r.reason}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="held-out data dir")
    parser.add_argument("--split", choices=SPLITS, default="all", help="which rows (see above)")
    parser.add_argument(
        "--show-misses", action="store_true", help="list the tune half's misses and false positives"
    )
    args = parser.parse_args(argv)
    data: Path = args.data
    if args.show_misses and args.split != "tune":
        parser.error("--show-misses lists the tune half only: add --split tune")

    started = time.perf_counter()
    shell = run_shell(data / "shell.jsonl", args.split)
    sql = run_sql(data / "sql.jsonl", args.split)
    elapsed = time.perf_counter() - started

    print(f"## nerve safety layer 1 — held-out data, split: {args.split}\n")
    print(table("shell", shell), end="\n\n")
    print(table("sql", sql), end="\n\n")
    every = shell + sql
    block = [r for r in every if r.label == "block"]
    allow = [r for r in every if r.label == "allow"]
    caught = sum(r.blocked for r in block)
    fps = sum(r.blocked for r in allow)
    print(
        f"**all**: recall {_pct(caught, len(block))} ({caught}/{len(block)}), "
        f"false positives {_pct(fps, len(allow))} ({fps}/{len(allow)}); "
        f"{len(every)} checks in {elapsed:.2f} s"
    )
    if args.show_misses:
        print()
        print(misses("shell", shell), end="\n\n")
        print(misses("sql", sql))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
