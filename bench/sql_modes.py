"""SQL layer 1 by mode and dialect: speed, and what read-only mode refuses.

    .venv/bin/python bench/sql_modes.py [--data ../shared/data/safety] [--samples 2000]

For each (mode, dialect): p50/p99 µs per check_rules("sql", ...) over the labelled SQL data set,
and the share of its allow rows that are blocked. In read-only mode the blocked allow rows are
expected (the data set's allow rows include INSERT, CREATE, ...): the table counts them by verb.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import Counter
from pathlib import Path

from nerve.safety import Scope, check_rules

ROOT = Path(__file__).resolve().parents[1]
CASES = [("default", "any"), ("default", "postgres"), ("default", "mysql"), ("read_only", "any")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "safety")
    parser.add_argument("--samples", type=int, default=2000)
    args = parser.parse_args()
    with (args.data / "sql_statements_labeled.jsonl").open() as f:
        rows = [json.loads(line) for line in f]
    texts = [r["text"] for r in rows]
    allow = [r["text"] for r in rows if r["label"] == "allow"]
    print("| mode | dialect | p50 µs | p99 µs | allow rows blocked | block rows blocked |")
    print("|---|---|---|---|---|---|")
    refused: Counter[str] = Counter()
    for mode, dialect in CASES:
        scope = Scope.of(mode=mode, dialect=dialect)
        for t in texts:  # warm up
            check_rules("sql", t, scope)
        times = []
        for i in range(max(args.samples, len(texts))):
            t = texts[i % len(texts)]
            start = time.perf_counter()
            check_rules("sql", t, scope)
            times.append((time.perf_counter() - start) * 1e6)
        times.sort()
        p50, p99 = statistics.median(times), times[int(len(times) * 0.99)]
        blocked = [t for t in allow if not check_rules("sql", t, scope).allowed]
        hits = sum(not check_rules("sql", r["text"], scope).allowed for r in rows) - len(blocked)
        block_rows = len(rows) - len(allow)
        print(
            f"| {mode} | {dialect} | {p50:.1f} | {p99:.1f} | {len(blocked)}/{len(allow)} "
            f"| {hits}/{block_rows} |"
        )
        if mode == "read_only":
            refused.update((t.split() or [""])[0].upper() for t in blocked)
    print("\nRead-only refusals among allow rows, by first word:", dict(refused.most_common(12)))


if __name__ == "__main__":
    main()
