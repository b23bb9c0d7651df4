"""The semantic layer: TF-IDF over character n-grams of the routes' examples; nearest one wins.

Why these choices (measured on bench/routing.py's routes, paraphrases that share no rule word):
- Character 3- and 4-grams inside word boundaries, not word uni+bigrams: they match inflections
  and fragments ("photograph" ~ "photo", "scanned" ~ "scan") that a word vocabulary of 50 short
  examples misses. Nearest route right for 94% of paraphrases vs 80% (unigrams alone: 80%), and
  at the best threshold 89% vs 79% of paraphrases and unrelated requests both handled right.
- Sublinear tf (1 + ln tf), smoothed idf; query n-grams never seen in any example keep the
  highest idf in the norm, so text about something else scores low instead of being judged on the
  few n-grams it happens to share.
- The nearest example (max cosine), not a route centroid: a centroid's similarities shrink as a
  route gains examples, so one threshold would not fit a route with 3 examples and one with 20.
- Long messages are judged by their opening and closing sentences, where a request states what it
  wants; pasted material in between would drown the request (2 KB prompts, top-1 right: 37%
  scored whole, 63% by their first and last 300 chars, 91% by their end sentences), and scoring
  at most ~600 chars keeps the cost flat.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["Match", "SemanticIndex", "ends"]

_WORD = re.compile(r"\w+")
_SENTENCE_END = re.compile(r"[.!?:;]+(?=\s)|\n")
_WHOLE = 400  # a message up to this long is scored whole
_EDGE = 300  # else its first and last sentences, within this many chars of either end
_MIN_SEGMENT = 16  # "Hi there!" says nothing: a sentence this short is joined with the next


@dataclass(frozen=True, slots=True)
class Match:
    route: str
    score: float  # cosine similarity to the nearest example
    example: str


@lru_cache(maxsize=8192)  # ~1 KB a word; common words recur, and this is 3x faster than slicing
def _grams(word: str) -> tuple[str, ...]:
    w = f" {word} "
    return tuple(w[i : i + 3] for i in range(len(w) - 2)) + tuple(
        w[i : i + 4] for i in range(len(w) - 3)
    )


def _counts(text: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for word in _WORD.findall(text.lower()):
        for g in _grams(word):
            counts[g] = counts.get(g, 0) + 1
    return counts


def ends(text: str) -> tuple[str, ...]:
    """The parts of a message that are scored: all of it, or its opening and closing sentences."""
    text = text.strip()
    if len(text) <= _WHOLE:
        return (text,)
    head, tail = text[:_EDGE], text[-_EDGE:]
    cut = next((m.end() for m in _SENTENCE_END.finditer(head) if m.end() >= _MIN_SEGMENT), _EDGE)
    starts = [m.end() for m in _SENTENCE_END.finditer(tail) if _EDGE - m.end() >= _MIN_SEGMENT]
    return head[:cut], tail[starts[-1] if starts else 0 :]


class SemanticIndex:
    """An inverted index from n-gram to (example, weight); examples in route order."""

    def __init__(self, routes: Sequence[tuple[str, Sequence[str]]]) -> None:
        self._examples = [
            (route, ex) for route, examples in routes for ex in examples if ex.strip()
        ]
        docs = [_counts(ex) for _, ex in self._examples]
        n = len(docs)
        df: dict[str, int] = {}
        for doc in docs:
            for g in doc:
                df[g] = df.get(g, 0) + 1
        idf = {g: math.log((1 + n) / (1 + d)) + 1 for g, d in df.items()}
        self._oov_idf = math.log(1 + n) + 1  # as if seen in no example: the rarest there is
        postings: dict[str, list[tuple[int, float]]] = {}
        for i, doc in enumerate(docs):
            weights = {g: _tf(c) * idf[g] for g, c in doc.items()}
            norm = math.sqrt(sum(w * w for w in weights.values())) or 1.0
            for g, w in weights.items():
                postings.setdefault(g, []).append((i, w / norm))
        self._index = {g: (idf[g], tuple(p)) for g, p in postings.items()}

    def nearest(self, text: str) -> Match | None:
        """The example most similar to `text` (best over its scored parts); None if none exist."""
        if not self._examples:
            return None
        best, best_i = 0.0, 0
        for part in ends(text):
            scores = self._scores(_counts(part))
            for i, s in enumerate(scores):
                if s > best:
                    best, best_i = s, i
        route, example = self._examples[best_i]
        return Match(route, best, example)

    def _scores(self, counts: dict[str, int]) -> list[float]:
        dots = [0.0] * len(self._examples)
        norm2 = 0.0
        get, oov, log = self._index.get, self._oov_idf, math.log
        for g, c in counts.items():
            tf = 1.0 if c == 1 else 1.0 + log(c)  # inlined _tf: this loop is the hot path
            entry = get(g)
            if entry is None:
                norm2 += (tf * oov) ** 2
                continue
            w = tf * entry[0]
            norm2 += w * w
            for i, x in entry[1]:
                dots[i] += w * x
        if norm2 == 0.0:
            return dots
        inv = 1.0 / math.sqrt(norm2)
        return [d * inv for d in dots]


def _tf(count: int) -> float:
    return 1.0 if count == 1 else 1.0 + math.log(count)
