"""Language detection quality and cost (SPEC LG-1, LG-2). Run: python bench/language.py

Measures `nerve.language.detect` on
- Hinglish-TOP validation (`hinglish_top_validation.tsv` under --data, never copied into the
  repo): the share of code-switched queries (`cs_query`) reported as containing Hindi and English
  and flagged code-switched, and the share of their English originals (`en_query`) reported as
  English only. Rows are also split in halves: the lexicons were tuned looking only at errors on
  odd rows, so even rows are the held-out figure;
- the romanized sets of tests/language/data: accuracy of the primary language, and of the exact
  language set;
- Dakshina v1.0 (`dakshina/` under --data: Wikipedia sentences romanized by people): accuracy
  of the primary language on the tune split (lines 1-2,500 of `<lang>.dev.roman.txt`, the only
  lines whose errors may be looked at) and on the held-out split (lines 2,501-5,000, figures
  only); the share of held-out sentences without Latin script in their native original that are
  flagged code-switched (false code-switch); 1-3-word windows cut from held-out sentences; a
  calibration table, confidence bins against accuracy;
- µs per call (p50, p99) and one call on 1 MB of text.
The same measures are taken for lingua (pip install lingua-language-detector) when it is
installed: a bench-only comparison, never a dependency of nerve. Prints markdown tables.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import random
import re
import statistics
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from nerve.language import LANGS, detect

ROOT = Path(__file__).resolve().parent.parent
SETS = ROOT / "tests" / "language" / "data"
HELD_OUT_MARK = "# --- held-out batch"
# Words Hinglish shares with English spelling but uses as Hindi (`is` = this, `me` = in).
HOMOGRAPHS = {"is", "me", "to", "do", "hi", "he", "main", "us", "par", "age", "band", "log", "use"}
Detector = Callable[[str], list[str]]  # text -> languages, primary first


def nerve_detector(text: str) -> list[str]:
    return detect(text).languages


def lingua_detector() -> Detector | None:
    try:
        from lingua import Language, LanguageDetectorBuilder
    except ImportError:
        return None
    wanted = {"en": "ENGLISH", "hi": "HINDI", "ta": "TAMIL", "te": "TELUGU",
              "kn": "KANNADA", "ml": "MALAYALAM", "bn": "BENGALI"}  # fmt: skip
    known = {code: getattr(Language, name) for code, name in wanted.items()
             if hasattr(Language, name)}  # fmt: skip
    codes = {lang: code for code, lang in known.items()}
    detector = LanguageDetectorBuilder.from_languages(*known.values()).build()

    def run(text: str) -> list[str]:
        found: dict[str, int] = {}
        for part in detector.detect_multiple_languages_of(text):
            code = codes[part.language]
            found[code] = found.get(code, 0) + part.end_index - part.start_index
        if not found:
            single = detector.detect_language_of(text)
            return [codes[single]] if single is not None else []
        return sorted(found, key=lambda code: -found[code])

    missing = [code for code in wanted if code not in known]
    print(f"lingua: no model for {', '.join(missing) or 'none'} of nerve's languages\n")
    return run


def read_hinglish(data: Path) -> list[dict[str, str]]:
    with (data / "hinglish_top_validation.tsv").open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


def read_set(lang: str, held_out_only: bool = False) -> list[tuple[str, list[str]]]:
    """A romanized set's (text, languages) rows; the held-out batch follows its marker line."""
    rows = []
    held_out = False
    for line in (SETS / f"romanized_{lang}.tsv").read_text(encoding="utf-8").splitlines():
        held_out = held_out or line.startswith(HELD_OUT_MARK)
        if line.strip() and not line.startswith("#") and (held_out or not held_out_only):
            text, languages = line.split("\t")
            rows.append((text, languages.split(",")))
    return rows


def share(hits: Iterable[bool]) -> str:
    values = list(hits)
    return f"{sum(values) / len(values):.1%} ({sum(values)}/{len(values)})" if values else "-"


def has_english_word(row: dict[str, str]) -> bool:
    """Does cs_query keep a word of the English original, written there in lower case (so not a
    name), other than a Hinglish homograph? Many queries are Hindi plus names only."""
    english = {w for w in row["en_query"].split()[1:] if w.isalpha() and w.islower()}
    english |= {row["en_query"].split()[0].lower()} if row["en_query"].split() else set()
    return any(w.lower() in english - HOMOGRAPHS for w in row["cs_query"].split() if len(w) > 1)


def hinglish_table(rows: list[dict[str, str]], detectors: dict[str, Detector]) -> None:
    print("### Hinglish-TOP validation\n")
    print("| detector | rows | cs_query: hi+en, code-switched | same, rows whose cs_query keeps "
          "an English word | en_query: English only |")  # fmt: skip
    print("| --- | --- | --- | --- | --- |")
    halves = {"all": rows, "odd rows (tuning)": rows[0::2], "even rows (held out)": rows[1::2]}
    for name, run in detectors.items():
        for label, part in halves.items():
            cs = [run(r["cs_query"]) for r in part]
            en = [run(r["en_query"]) for r in part]
            hits = [{"hi", "en"} <= set(langs) and len(langs) > 1 for langs in cs]
            worded = [hit for hit, r in zip(hits, part, strict=True) if has_english_word(r)]
            english = share(langs == ["en"] for langs in en)
            print(f"| {name} | {label} | {share(hits)} | {share(worded)} | {english} |")
    print()


def romanized_table(detectors: dict[str, Detector]) -> None:
    print("### Romanized sets (tests/language/data), primary language / exact set\n")
    print("| language | sentences | " + " | ".join(detectors) + " |")
    print("| --- | --- | " + " | ".join("---" for _ in detectors) + " |")
    for lang in LANGS[1:]:
        for label, rows in (("all", read_set(lang)), ("held-out batch", read_set(lang, True))):
            cells = []
            for run in detectors.values():
                got = [run(text) for text, _ in rows]
                pairs = list(zip(got, rows, strict=True))
                primary = share(bool(g) and g[0] == want[0] for g, (_, want) in pairs)
                exact = share(g == want for g, (_, want) in pairs)
                cells.append(f"{primary} / {exact}")
            print(f"| {lang} {label} | {len(rows)} | " + " | ".join(cells) + " |")
    print()


TUNE_LINES = 2500  # lines 1-2,500 tune; 2,501-5,000 are held out
_LATIN = re.compile(r"[A-Za-z]")
_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)*")
BINS = (0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.01)


def read_dakshina(data: Path, lang: str) -> tuple[list[tuple[str, bool]], list[tuple[str, bool]]]:
    """(tune, held-out) rows of (romanized sentence, is its native original free of Latin?)."""
    root = data / "dakshina"
    roman = (root / f"{lang}.dev.roman.txt").read_text(encoding="utf-8").splitlines()
    native = (root / f"{lang}.dev.native.txt").read_text(encoding="utf-8").splitlines()
    rows = [(r, _LATIN.search(n) is None) for r, n in zip(roman, native, strict=True)]
    return rows[:TUNE_LINES], rows[TUNE_LINES:]


def windows(sentences: list[str], length: int, seed: int = 16) -> list[str]:
    """One window of `length` words from each sentence long enough, at a seeded position."""
    rng = random.Random(seed * 10 + length)
    cut = []
    for text in sentences:
        words = _WORD.findall(text)
        if len(words) >= length:
            start = rng.randrange(len(words) - length + 1)
            cut.append(" ".join(words[start : start + length]))
    return cut


def dakshina_tables(data: Path) -> list[str]:
    """Print the Dakshina tables for nerve; return held-out sentences for the timing table."""
    print("### Dakshina romanized sentences (nerve): primary language right\n")
    print("| language | tune split | held-out split | held-out false code-switch | "
          "1 word | 2 words | 3 words |")  # fmt: skip
    print("| --- | --- | --- | --- | --- | --- | --- |")
    calibration: dict[str, list[tuple[float, bool]]] = {"tune": [], "held-out": []}
    texts: list[str] = []
    for lang in LANGS[1:]:
        tune, held = read_dakshina(data, lang)
        cells = []
        for split, rows in (("tune", tune), ("held-out", held)):
            results = [detect(text) for text, _ in rows]
            hits = [r.languages[:1] == [lang] for r in results]
            calibration[split] += [(r.confidence, h) for r, h in zip(results, hits, strict=True)]
            cells.append(share(hits))
        pure = [text for text, clean in held if clean]
        cells.append(share(detect(text).is_code_switched for text in pure))
        for length in (1, 2, 3):
            for split, rows in (("tune", tune), ("held-out", held)):
                results = [detect(w) for w in windows([t for t, _ in rows], length)]
                hits = [r.languages[:1] == [lang] for r in results]
                calibration[split] += [
                    (r.confidence, h) for r, h in zip(results, hits, strict=True)
                ]
                if split == "held-out":
                    cells.append(share(hits))
        print(f"| {lang} | " + " | ".join(cells) + " |")
        texts += [text for text, _ in held[:300]]
    print("\n### Calibration (Dakshina sentences and 1-3-word windows, all languages)\n")
    print("| confidence | tune: rows | tune: right | held-out: rows | held-out: right |")
    print("| --- | --- | --- | --- | --- |")
    for low, high in itertools.pairwise(BINS):
        cells = []
        for split in ("tune", "held-out"):
            inside = [hit for conf, hit in calibration[split] if low <= conf < high]
            cells += [str(len(inside)), f"{sum(inside) / len(inside):.1%}" if inside else "-"]
        print(f"| {low:.2f}-{min(high, 1.0):.2f} | " + " | ".join(cells) + " |")
    print()
    return texts


def timing_table(texts: list[str], detectors: dict[str, Detector], label: str = "") -> None:
    print(f"### Cost per call{label}\n")
    print("| detector | calls | p50 µs | p99 µs | 1 MB text, ms |")
    print("| --- | --- | --- | --- | --- |")
    big = ("mere saare emails check karke batao, report banao aur manager ko bhejo. " * 15000)[
        : 1 << 20
    ]
    for name, run in detectors.items():
        for text in texts[:50]:
            run(text)  # warm up: lexicons, n-gram model, caches
        samples = []
        for text in texts:
            start = time.perf_counter_ns()
            run(text)
            samples.append((time.perf_counter_ns() - start) / 1000)
        samples.sort()
        p50 = statistics.median(samples)
        p99 = samples[min(len(samples) - 1, int(len(samples) * 0.99))]
        start = time.perf_counter()
        run(big)
        big_ms = (time.perf_counter() - start) * 1000
        print(f"| {name} | {len(samples)} | {p50:.0f} | {p99:.0f} | {big_ms:.0f} |")
    print()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "language")
    parser.add_argument("--no-lingua", action="store_true", help="skip the lingua comparison")
    args = parser.parse_args(argv)

    detectors: dict[str, Detector] = {"nerve": nerve_detector}
    lingua = None if args.no_lingua else lingua_detector()
    if lingua is not None:
        detectors["lingua"] = lingua
    elif not args.no_lingua:
        print("lingua is not installed: its column is skipped\n")

    texts: list[str] = []
    if (args.data / "hinglish_top_validation.tsv").exists():
        rows = read_hinglish(args.data)
        hinglish_table(rows, detectors)
        texts = [r["cs_query"] for r in rows] + [r["en_query"] for r in rows]
    else:
        print(f"{args.data}/hinglish_top_validation.tsv not found: Hinglish table skipped\n")
    romanized_table(detectors)
    texts += [text for lang in LANGS[1:] for text, _ in read_set(lang)]
    timing_table(texts, detectors, ": Hinglish-TOP queries and the romanized sets")
    if (args.data / "dakshina").is_dir():
        timing_table(dakshina_tables(args.data), {"nerve": nerve_detector},
                     ": Dakshina held-out sentences (300 per language)")  # fmt: skip
    else:
        print(f"{args.data}/dakshina not found: Dakshina tables skipped\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
