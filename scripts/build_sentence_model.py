"""Build nerve.language's sentence model from Google Dakshina v1.0 (CC BY-SA 4.0).

Usage: python scripts/build_sentence_model.py /path/to/dakshina [--out PATH] [--tune-lines N]
       [--lexicon-weight R] [--iterations N]

A multinomial logistic regression over the character 1- to 5-grams of `^word$` of each word of
a romanized sentence (counts summed over the sentence), one class per Indic language (hi, ta,
te, kn, ml, bn), with no bias: the languages are balanced. Samples: the TUNE split of the dev
sentences (lines 1-2,500 of `<lang>.dev.roman.txt`, `--tune-lines`; never the held-out lines
2,501-5,000 that bench/language.py reports), each language's sentences weighing 1 in all; and
the romanizations of the train lexicons (`<lang>.lexicon.train.tsv`) as one-word samples,
weighted by their attestation count, each language's weighing `--lexicon-weight` in all. Fitted
by full-batch Adam for `--iterations` steps from zero with a small L2 penalty: deterministic,
so the same input gives the same bytes. Writes `src/nerve/language/model/sentence.json.gz`:
`langs`, `grams` (space-separated n-grams seen in two samples or more whose weights are not all
zero once rounded) and `weights` (per language, integer tenths of a nat aligned with `grams`,
each n-gram's weights less their largest). Read by `nerve/language/sentence.py`.
"""

from __future__ import annotations

import argparse
import gzip
import re
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
from nerve.language.sentence import ORDERS, grams  # the n-grams the model reads

LANGS = ("hi", "ta", "te", "kn", "ml", "bn")
TUNE_LINES = 2500  # dev sentence lines 1-2,500 tune; 2,501-5,000 are held out: never read
LEXICON_WEIGHT = 0.5  # a language's lexicon weighs this much against its tune sentences
ITERATIONS = 80
L2 = 1e-5
STEP = 0.01  # Adam's step
MIN_DF = 2  # an n-gram in fewer samples than this gets no weight
SCALE = 10  # weights are written in tenths of a nat
OUT = Path(__file__).resolve().parent.parent / "src" / "nerve" / "language" / "model"
_WORD = re.compile(r"[a-z]+")

Sample = tuple[list[str], int, float]  # words, language index, weight


def read_lexicon(path: Path) -> Counter[str]:
    """Romanized spelling -> attestation count, summed over the native words it spells."""
    counts: Counter[str] = Counter()
    for line in path.read_text(encoding="utf-8").splitlines():
        cols = line.split("\t")
        if len(cols) == 3 and _WORD.fullmatch(cols[1].strip().lower()):
            counts[cols[1].strip().lower()] += int(cols[2])
    return counts


def samples(root: Path, tune_lines: int, lexicon_weight: float) -> list[Sample]:
    out: list[Sample] = []
    for k, lang in enumerate(LANGS):
        lines = (root / f"{lang}.dev.roman.txt").read_text(encoding="utf-8").splitlines()
        sentences = [_WORD.findall(t.lower()) for t in lines[: min(tune_lines, TUNE_LINES)]]
        sentences = [s for s in sentences if s]
        out += [(s, k, 1.0 / len(sentences)) for s in sentences]
        if lexicon_weight:
            lexicon = sorted(read_lexicon(root / f"{lang}.lexicon.train.tsv").items())
            total = sum(c for _, c in lexicon)
            out += [([w], k, lexicon_weight * c / total) for w, c in lexicon]
    return out


def fit(data: list[Sample], iterations: int) -> tuple[list[str], np.ndarray]:
    """The n-grams kept and their weights (one row each, a column per language)."""
    df: Counter[str] = Counter()
    for words, _, _ in data:
        df.update({g for w in words for g in grams(w)})
    names = sorted(g for g, c in df.items() if c >= MIN_DF)
    index = {g: i for i, g in enumerate(names)}
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    target = np.zeros(len(data), dtype=np.int64)
    weight = np.zeros(len(data))
    for r, (words, k, w) in enumerate(data):
        found = Counter(index[g] for x in words for g in grams(x) if g in index)
        for f, v in sorted(found.items()):
            rows.append(r)
            cols.append(f)
            vals.append(float(v))
        target[r], weight[r] = k, w
    row, col, val = np.array(rows), np.array(cols), np.array(vals)
    n, classes, features = len(data), len(LANGS), len(names)
    weight /= weight.sum()
    onehot = np.eye(classes)[target]
    w_ = np.zeros((features, classes))
    m = np.zeros_like(w_)
    v2 = np.zeros_like(w_)
    for step in range(iterations):
        part = w_[col] * val[:, None]
        s = np.stack([np.bincount(row, part[:, k], n) for k in range(classes)], axis=1)
        s -= s.max(axis=1, keepdims=True)
        p = np.exp(s)
        p /= p.sum(axis=1, keepdims=True)
        g = ((p - onehot) * weight[:, None])[row] * val[:, None]
        grad = np.stack([np.bincount(col, g[:, k], features) for k in range(classes)], axis=1)
        grad += L2 * w_
        m = 0.9 * m + 0.1 * grad
        v2 = 0.999 * v2 + 0.001 * grad * grad
        m_hat = m / (1 - 0.9 ** (step + 1))
        v_hat = v2 / (1 - 0.999 ** (step + 1))
        w_ -= STEP * m_hat / (np.sqrt(v_hat) + 1e-8)
    return names, w_


def build(
    root: Path,
    tune_lines: int = TUNE_LINES,
    lexicon_weight: float = LEXICON_WEIGHT,
    iterations: int = ITERATIONS,
) -> dict[str, object]:
    names, weights = fit(samples(root, tune_lines, lexicon_weight), iterations)
    quantized = np.rint((weights - weights.max(axis=1, keepdims=True)) * SCALE).astype(np.int64)
    keep = [i for i in range(len(names)) if quantized[i].min() < 0]
    return {
        "source": "Google Dakshina v1.0 train lexicons and tune sentences, CC BY-SA 4.0",
        "langs": list(LANGS),
        "orders": list(ORDERS),
        "tune_lines": min(tune_lines, TUNE_LINES),
        "lexicon_weight": lexicon_weight,
        "iterations": iterations,
        "grams": " ".join(names[i] for i in keep),
        "weights": {lang: [int(quantized[i, k]) for i in keep] for k, lang in enumerate(LANGS)},
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dakshina", type=Path, help="folder with the lexicons and dev sentences")
    parser.add_argument("--out", type=Path, default=OUT / "sentence.json.gz")
    parser.add_argument("--tune-lines", type=int, default=TUNE_LINES)
    parser.add_argument("--lexicon-weight", type=float, default=LEXICON_WEIGHT)
    parser.add_argument("--iterations", type=int, default=ITERATIONS)
    args = parser.parse_args(argv)
    missing = [
        name
        for lang in LANGS
        for name in (f"{lang}.lexicon.train.tsv", f"{lang}.dev.roman.txt")
        if not (args.dakshina / name).exists()
    ]
    if missing:
        print(f"missing in {args.dakshina}: {', '.join(missing)}", file=sys.stderr)
        return 2
    model = build(args.dakshina, args.tune_lines, args.lexicon_weight, args.iterations)
    data = orjson.dumps(model, option=orjson.OPT_SORT_KEYS)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
    print(f"{args.out}: {args.out.stat().st_size:,} bytes ({len(data):,} uncompressed)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
