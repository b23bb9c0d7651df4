"""Build nerve.language's romanized word model from Google Dakshina v1.0 (CC BY-SA 4.0).

Usage: python scripts/build_language_model.py /path/to/dakshina [--english CMUDICT] [--out PATH]
       [--tune-lines N] [--char-tune W]

Reads the TRAIN lexicons, `<lang>.lexicon.train.tsv` (native<TAB>romanized<TAB>count), for
hi, ta, te, kn, ml and bn, and the TUNE split of the dev sentences (lines 1-2,500 of
`<lang>.dev.roman.txt`, `--tune-lines`), never the held-out lines 2,501-5,000 that
bench/language.py reports: from the tune sentences whose native original has no Latin letter
(pure Indic text), how often each romanized word occurs (`freq`, words seen twice or more). Writes
`src/nerve/language/model/romanized.json.gz`: for each language, every attested romanized
spelling, split by attestation (`common`: two or more, `rare`: one), as space-separated strings
(fast to load), and character n-gram counts (orders 1 to 4 over `^word$`, weighted by the
attestation counts, plus `--char-tune` (10) times each word's occurrences in those tune
sentences, so that the inflected forms of running text count) for words no table lists: the
n-grams as one space-separated string and a count array per language. English, the other side
of every romanized word, gets the same from the CMU Pronouncing Dictionary (BSD-style licence)
that the `pocketsphinx` wheel carries (`--english`, found in the environment by default): its
words as one table, `en`. The output is deterministic: the same input gives the same bytes.
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
TUNE_LINES = 2500  # dev sentence lines 1-2,500 tune; 2,501-5,000 are held out: never read
MIN_FREQ = 2  # a word seen fewer times than this in a language's tune sentences is not kept
MIN_GRAM = 3  # an n-gram seen fewer times than this (weighted, all languages) is dropped
# A word of the tune sentences weighs this many attestations in the character model: running
# text's inflected forms (`-lu`, `-ayum`) are what unlisted words look like.
CHAR_TUNE = 10
OUT = Path(__file__).resolve().parent.parent / "src" / "nerve" / "language" / "model"
_WORD = re.compile(r"[a-z]+")
_LATIN = re.compile(r"[A-Za-z]")
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


def read_sentences(root: Path, lang: str, lines: int) -> tuple[Counter[str], int]:
    """Romanized word -> occurrences in the first `lines` dev sentences (at most TUNE_LINES)
    whose native original has no Latin letter, so no English written as English; and how
    many such sentences there are."""
    roman = (root / f"{lang}.dev.roman.txt").read_text(encoding="utf-8").splitlines()
    native = (root / f"{lang}.dev.native.txt").read_text(encoding="utf-8").splitlines()
    counts: Counter[str] = Counter()
    pure = 0
    for text, original in zip(roman[: min(lines, TUNE_LINES)], native, strict=False):
        if _LATIN.search(original) is None:
            pure += 1
            counts.update(_STRETCH.sub(r"\1\1", w) for w in _WORD.findall(text.lower()))
    return counts, pure


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


def build(
    root: Path, english: Path, tune_lines: int = TUNE_LINES, char_tune: int = CHAR_TUNE
) -> dict[str, object]:
    words = {lang: read_lexicon(root / f"{lang}.lexicon.train.tsv") for lang in LANGS[:-1]}
    tune = {lang: read_sentences(root, lang, tune_lines) for lang in LANGS[:-1]}
    seen = {lang: counts for lang, (counts, _) in tune.items()}
    words["en"] = read_cmudict(english)
    spelled = {lang: Counter(words[lang]) for lang in LANGS}
    for lang, counts in seen.items():
        for word, count in counts.items():
            if len(word) >= 2:
                spelled[lang][word] += char_tune * count
    gram_counts = {lang: grams(spelled[lang]) for lang in LANGS}
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
        "freq": {
            lang: " ".join(
                f"{w}:{c}" for w, c in sorted(seen.get(lang, Counter()).items()) if c >= MIN_FREQ
            )
            for lang in LANGS
        },
        "tune_lines": min(tune_lines, TUNE_LINES),
        "char_tune": char_tune,
        "sentences": {lang: pure for lang, (_, pure) in tune.items()},
        "grams": " ".join(kept),
        "gram_counts": {lang: [gram_counts[lang][g] for g in kept] for lang in LANGS},
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dakshina", type=Path, help="folder with <lang>.lexicon.train.tsv")
    parser.add_argument("--english", type=Path, default=default_cmudict(), help="cmudict file")
    parser.add_argument("--out", type=Path, default=OUT / "romanized.json.gz")
    parser.add_argument(
        "--tune-lines", type=int, default=TUNE_LINES, help="dev sentence lines to count words from"
    )
    parser.add_argument(
        "--char-tune", type=int, default=CHAR_TUNE, help="weight of a tune word in the char model"
    )
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
    data = orjson.dumps(
        build(args.dakshina, args.english, args.tune_lines, args.char_tune),
        option=orjson.OPT_SORT_KEYS,
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
    print(f"{args.out}: {args.out.stat().st_size:,} bytes ({len(data):,} uncompressed)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
