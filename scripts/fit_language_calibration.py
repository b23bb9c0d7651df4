"""Fit nerve.language's confidence calibration (calibration.KNOTS) on the tune split only.

Usage: python scripts/fit_language_calibration.py [--data ../shared/data/language]

Rows: Dakshina's tune sentences (lines 1-2,500 of `<lang>.dev.roman.txt`, never the held-out
lines 2,501-5,000), the 1-3-word windows bench/language.py cuts from them, and the odd rows of
Hinglish-TOP's English queries. Each row's raw confidence (detection with the calibration
switched off) is paired with whether its primary language is right; the rows, sorted by raw
confidence, fall into 20 equal bins, and each bin gives a knot (mean raw, share right), kept
monotone by pooling adjacent bins that break the order, and capped at 0.99. Prints the KNOTS
tuple to paste into src/nerve/language/calibration.py.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from bench.language import read_dakshina, read_hinglish, windows  # noqa: E402

from nerve.language.tokens import INDIC  # noqa: E402

# The module, not the package's `detect` function of the same name.
detect_module = importlib.import_module("nerve.language.detect")

BINS = 20
CAP = 0.99


def rows(data: Path) -> list[tuple[float, bool]]:
    """(raw confidence, primary language right) for every tune row."""
    out: list[tuple[float, bool]] = []
    for lang in INDIC:
        tune, _ = read_dakshina(data, lang)  # the held-out part is dropped unread
        texts = [text for text, _ in tune]
        for length in (None, 1, 2, 3):
            for text in texts if length is None else windows(texts, length):
                result = detect_module.detect(text)
                out.append((result.confidence, result.languages[:1] == [lang]))
    for row in read_hinglish(data)[0::2]:
        result = detect_module.detect(row["en_query"])
        out.append((result.confidence, result.languages == ["en"]))
    return out


def knots(pairs: list[tuple[float, bool]]) -> list[tuple[float, float]]:
    pairs = sorted(pairs)
    size = len(pairs) / BINS
    bins = [pairs[round(i * size) : round((i + 1) * size)] for i in range(BINS)]
    # (sum raw, hits, count) per bin; pool neighbours until the share right never falls.
    pooled: list[list[float]] = []
    for part in bins:
        if not part:
            continue
        pooled.append([sum(r for r, _ in part), sum(h for _, h in part), len(part)])
        while len(pooled) > 1 and pooled[-2][1] / pooled[-2][2] > pooled[-1][1] / pooled[-1][2]:
            last = pooled.pop()
            pooled[-1] = [a + b for a, b in zip(pooled[-1], last, strict=True)]
    out = [(0.0, 0.0)]
    for raw, hits, count in pooled:
        out.append((round(raw / count, 3), round(min(CAP, hits / count), 3)))
    if out[-1][0] < 1.0:
        out.append((1.0, out[-1][1]))
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "language")
    args = parser.parse_args(argv)
    detect_module.calibrated = lambda raw: raw  # raw confidences: the table is what is fitted
    table = knots(rows(args.data))
    print("KNOTS: tuple[tuple[float, float], ...] = (")
    for raw, right in table:
        print(f"    ({raw}, {right}),")
    print(")")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
