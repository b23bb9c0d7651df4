"""Fail when a Python module grows past 400 lines (STYLE.md: one concept per module)."""

from __future__ import annotations

import sys
from pathlib import Path

LIMIT = 400


def main(roots: list[str]) -> int:
    too_long = []
    for root in roots:
        for path in sorted(Path(root).rglob("*.py")):
            if "node_modules" in path.parts:
                continue
            lines = sum(1 for _ in path.open(encoding="utf-8"))
            if lines > LIMIT:
                too_long.append(f"{path}: {lines} lines (limit {LIMIT})")
    for line in too_long:
        print(line)
    return 1 if too_long else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["src"]))
