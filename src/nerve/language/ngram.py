"""Character n-gram scores for words no lexicon lists (SPEC LG-1).

Romanized Indic words that no list holds still look like their language: `-unnu` is Malayalam,
`-ndi` Telugu, `bh`/`aa` are not English. A naive-Bayes model over character 1- to 4-grams of
`^word$`, trained on the lexicons at first use (a few milliseconds), gives each language a
posterior. Suffix entries of the lexicons add evidence for endings the training words lack.
English and the Indic group get equal priors: an unknown word is as likely a loanword as not.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping

from nerve.language.lexicon import load
from nerve.language.tokens import INDIC, LANGS

_ORDERS = (1, 2, 3, 4)
_ALPHA = 0.5  # add-alpha smoothing
_TEMPERATURE = 4.0  # overlapping n-grams are not independent: soften the naive-Bayes sum
_SUFFIX_BONUS = 1.2  # log-odds added when a word ends in a listed suffix...
_SUFFIX_PER_CHAR = 0.4  # ...and a little more for longer, more specific endings
_PRIOR = {lang: math.log(0.5 if lang == "en" else 0.5 / len(INDIC)) for lang in LANGS}


def grams(word: str) -> Iterator[str]:
    padded = f"^{word}$"
    for n in _ORDERS:
        for i in range(len(padded) - n + 1):
            gram = padded[i : i + n]
            if gram not in ("^", "$"):
                yield gram


class NgramModel:
    """Per-language n-gram counts; `posterior(word)` maps each language to a probability."""

    def __init__(self, words: Mapping[str, Iterable[str]], suffixes: Mapping[str, Iterable[str]]):
        self._counts: dict[str, Counter[str]] = {}
        self._totals: dict[str, list[int]] = {}
        vocab: list[set[str]] = [set() for _ in _ORDERS]
        for lang in LANGS:
            latin = [w for w in words.get(lang, ()) if w.isascii()]
            self._counts[lang] = counts = _count(latin)
            # Windows that straddle two words ("a$^b") are counted but never asked for; the
            # totals count only the windows inside one "^word$".
            self._totals[lang] = [sum(_inside(len(w), n) for w in latin) for n in _ORDERS]
            for gram in counts:
                vocab[len(gram) - 1].add(gram)
        self._vocab = [len(v) + 1 for v in vocab]
        self._suffixes = {lang: tuple(suffixes.get(lang, ())) for lang in LANGS}
        # Every listed ending -> the first language (LANGS order) listing it: `ending_lang`
        # then tries the word's own endings, longest first, instead of every listed suffix.
        self._ending: dict[str, str] = {}
        for lang in LANGS:
            for suffix in self._suffixes[lang]:
                self._ending.setdefault(suffix, lang)
        self._longest = max((len(s) for s in self._ending), default=0)
        self.posterior = functools.lru_cache(maxsize=16384)(self._posterior)

    def ending_lang(self, word: str, shortest: int = 4) -> str | None:
        """The language whose listed ending (of `shortest` letters or more) `word` has, the
        longest ending winning; short endings like `-ki` or `-ini` are too common to tell."""
        for n in range(min(self._longest, len(word) - 1), shortest - 1, -1):
            lang = self._ending.get(word[-n:])
            if lang is not None:
                return lang
        return None

    def _posterior(self, word: str) -> dict[str, float]:
        scores: dict[str, float] = {}
        word_grams = list(grams(word))
        for lang in LANGS:
            counts, totals = self._counts[lang], self._totals[lang]
            loglik = 0.0
            for gram in word_grams:
                k = len(gram) - 1
                loglik += math.log((counts[gram] + _ALPHA) / (totals[k] + _ALPHA * self._vocab[k]))
            score = loglik / _TEMPERATURE + _PRIOR[lang]
            for suffix in self._suffixes[lang]:
                if len(word) > len(suffix) and word.endswith(suffix):
                    score += _SUFFIX_BONUS + _SUFFIX_PER_CHAR * len(suffix)
                    break
            scores[lang] = score
        top = max(scores.values())
        exp = {lang: math.exp(s - top) for lang, s in scores.items()}
        total = sum(exp.values())
        return {lang: e / total for lang, e in exp.items()}


def _count(words: list[str]) -> Counter[str]:
    """Every n-gram of every `^word$`, counted in C: one string, shifted copies zipped."""
    text = "".join(f"^{w}$" for w in words)
    counts: Counter[str] = Counter()
    for n in _ORDERS:
        counts.update(map("".join, zip(*(text[k:] for k in range(n)), strict=False)))
    return counts


def _inside(length: int, n: int) -> int:
    """How many n-grams one `^word$` of `length` letters yields (bare ^ and $ excluded)."""
    return length if n == 1 else max(0, length + 3 - n)


@functools.cache
def model() -> NgramModel:
    """The model trained on the packaged lexicons, built once on first use."""
    lexicon = load()
    words = {lang: lex.words.keys() for lang, lex in lexicon.by_lang.items()}
    suffixes = {lang: lex.suffixes for lang, lex in lexicon.by_lang.items()}
    return NgramModel(words, suffixes)
