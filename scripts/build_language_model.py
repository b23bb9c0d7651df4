"""Build nerve.language's romanized word model from Google Dakshina v1.0 (CC BY-SA 4.0).

Usage: python scripts/build_language_model.py /path/to/dakshina [--english CMUDICT] [--out PATH]

Reads only the TRAIN lexicons, `<lang>.lexicon.train.tsv` (native<TAB>romanized<TAB>count), for
hi, ta, te, kn, ml and bn: never the dev sentences, which are the evaluation data. Writes
`src/nerve/language/model/romanized.json.gz`: for each language, every attested romanized
spelling, split by attestation (`common`: two or more, `rare`: one), as space-separated strings
(fast to load), and character n-gram counts (orders 1 to 4 over `^word$`, weighted by the
attestation counts) for words no table lists: the n-grams as one space-separated string and a
count array per language. English, the other side of every romanized word, gets the same from
the CMU Pronouncing Dictionary (BSD-style licence) that the `pocketsphinx` wheel carries
(`--english`, found in the environment by default): its words as one table, `en`. The output is
deterministic: the same input gives the same bytes.
"""

from __future__ import annotations

import argparse
import gzip
import re
import sys
from collections import Counter
from pathlib import Path

import orjson

LANGS = ("hi", "ta", "te", "kn", "ml", "bn", "en")
ORDERS = (1, 2, 3, 4)
MIN_GRAM = 3  # an n-gram seen fewer times than this (weighted, all languages) is dropped
OUT = Path(__file__).resolve().parent.parent / "src" / "nerve" / "language" / "model"
_WORD = re.compile(r"[a-z]+")
_STRETCH = re.compile(r"(.)\1{2,}")


def read_lexicon(path: Path) -> Counter[str]:
    """Romanized spelling -> attestation count, summed over the native words it spells."""
    counts: Counter[str] = Counter()
    for line in path.read_text(encoding="utf-8").splitlines():
        cols = line.split("\t")
        if len(cols) != 3:
            continue
        roman = cols[1].strip().lower()
        if _WORD.fullmatch(roman) and len(roman) >= 2:
            counts[_STRETCH.sub(r"\1\1", roman)] += int(cols[2])
    return counts


def read_cmudict(path: Path) -> Counter[str]:
    """English spellings of the CMU dictionary (`word(2)` variants folded), each counted 2."""
    counts: Counter[str] = Counter()
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        word = line.split(" ", 1)[0].split("(", 1)[0].lower()
        if _WORD.fullmatch(word) and len(word) >= 2:
            counts[word] = 2
    return counts


def default_cmudict() -> Path | None:
    try:
        import pocketsphinx  # type: ignore[import-untyped]  # build time only
    except ImportError:
        return None
    path = Path(pocketsphinx.__file__).parent / "model" / "en-us" / "cmudict-en-us.dict"
    return path if path.exists() else None


def grams(words: Counter[str]) -> Counter[str]:
    out: Counter[str] = Counter()
    for word, count in words.items():
        padded = f"^{word}$"
        for n in ORDERS:
            for i in range(len(padded) - n + 1):
                gram = padded[i : i + n]
                if gram not in ("^", "$"):
                    out[gram] += count
    return out


def build(root: Path, english: Path) -> dict[str, object]:
    words = {lang: read_lexicon(root / f"{lang}.lexicon.train.tsv") for lang in LANGS[:-1]}
    words["en"] = read_cmudict(english)
    gram_counts = {lang: grams(words[lang]) for lang in LANGS}
    every = sorted(set().union(*(set(g) for g in gram_counts.values())))
    kept = [g for g in every if sum(gram_counts[lang][g] for lang in LANGS) >= MIN_GRAM]
    return {
        "source": "Google Dakshina v1.0 train lexicons, CC BY-SA 4.0",
        "langs": list(LANGS),
        "orders": list(ORDERS),
        # Totals per language and order, over all n-grams (kept or not), for the estimates.
        "totals": {
            lang: [sum(c for g, c in gram_counts[lang].items() if len(g) == n) for n in ORDERS]
            for lang in LANGS
        },
        "vocab": [sum(1 for g in kept if len(g) == n) + 1 for n in ORDERS],
        "common": {
            lang: " ".join(sorted(w for w, c in words[lang].items() if c >= 2)) for lang in LANGS
        },
        "rare": {
            lang: " ".join(sorted(w for w, c in words[lang].items() if c < 2)) for lang in LANGS
        },
        "grams": " ".join(kept),
        "gram_counts": {lang: [gram_counts[lang][g] for g in kept] for lang in LANGS},
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dakshina", type=Path, help="folder with <lang>.lexicon.train.tsv")
    parser.add_argument("--english", type=Path, default=default_cmudict(), help="cmudict file")
    parser.add_argument("--out", type=Path, default=OUT / "romanized.json.gz")
    args = parser.parse_args(argv)
    if args.english is None or not args.english.exists():
        print("no CMU dictionary: install pocketsphinx or pass --english", file=sys.stderr)
        return 2
    missing = [
        lang for lang in LANGS[:-1] if not (args.dakshina / f"{lang}.lexicon.train.tsv").exists()
    ]
    if missing:
        print(f"no train lexicon for {', '.join(missing)} in {args.dakshina}", file=sys.stderr)
        return 2
    data = orjson.dumps(build(args.dakshina, args.english), option=orjson.OPT_SORT_KEYS)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
    print(f"{args.out}: {args.out.stat().st_size:,} bytes ({len(data):,} uncompressed)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
