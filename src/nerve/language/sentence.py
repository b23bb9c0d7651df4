"""Which Indic language a whole romanized sentence is in, from its character n-grams (SPEC LG-1).

The word votes judge each word on its own; what tells Telugu from Kannada, or Malayalam from
Tamil, is often the sum of many small hints spread over a sentence. This model reads the words
of a sentence that are not English as `^word$` strings and adds, per Indic language, the weight
of each of their character 1- to 5-grams: a multinomial logistic regression over n-gram counts,
fitted by `scripts/build_sentence_model.py` on the tune split of Dakshina's dev sentences (lines
1-2,500 only) and the train lexicons' romanizations weighted by count. `model/sentence.json.gz`
holds, per n-gram, its weight per language less the largest (so 0 for the language that likes
it most), in tenths of a nat. A word's vector is cached: a sentence costs one dict
look-up per word it has seen before. It only ranks the Indic languages; whether a sentence is
Indic at all, or mixed, the word votes decide (see `detect.py`).
"""

from __future__ import annotations

import functools
import gzip
import logging
from collections.abc import Iterable
from importlib import resources

import numpy as np
import orjson

from nerve.language.tokens import INDIC

MODEL = "sentence.json.gz"
ORDERS = (1, 2, 3, 4, 5)
SCALE = 10.0  # weights are stored in tenths of a nat
log = logging.getLogger(__name__)


def grams(word: str) -> list[str]:
    """The character 1- to 5-grams of `^word$` (bare `^` and `$` excluded)."""
    padded = f"^{word}$"
    out = []
    for n in ORDERS:
        for i in range(len(padded) - n + 1):
            gram = padded[i : i + n]
            if gram not in ("^", "$"):
                out.append(gram)
    return out


class SentenceModel:
    """Per-n-gram weight vectors over the Indic languages (INDIC order): row `index[gram]` of
    `weights`. Rows stay in one numpy array because 200K Python tuples take a second to build."""

    def __init__(self, index: dict[str, int], weights: np.ndarray) -> None:
        self.index = index
        self.weights = weights
        self.loaded = bool(index)
        self.word = functools.lru_cache(maxsize=32768)(self._word)

    def _word(self, word: str) -> tuple[float, ...]:
        get = self.index.get
        rows = [row for row in map(get, grams(word)) if row is not None]
        if not rows:
            return (0.0,) * len(INDIC)
        return tuple(self.weights[rows].sum(axis=0).tolist())

    def score(self, words: Iterable[str]) -> list[float]:
        """Per Indic language, the log-likelihood of `words` less the best (so max is 0)."""
        score = [0.0] * len(INDIC)
        for word in words:
            score = [a + b for a, b in zip(score, self.word(word), strict=True)]
        top = max(score)
        return [value - top for value in score]


class ModelError(RuntimeError):
    """The packaged sentence model is missing or unreadable; names the file."""


def parse(blob: bytes, source: str = MODEL) -> SentenceModel:
    """A model from the gzipped JSON bytes; ModelError naming `source` when unreadable."""
    try:
        data = orjson.loads(gzip.decompress(blob))
        if data["langs"] != list(INDIC):
            raise ModelError(f"{source}: expected languages {INDIC}, got {data['langs']!r}")
        names = data["grams"].split(" ") if data["grams"] else []
        weights = np.array([data["weights"][lang] for lang in INDIC], dtype=np.float64).T / SCALE
        if weights.shape != (len(names), len(INDIC)):
            raise ValueError(f"{len(names)} n-grams but weights of shape {weights.shape}")
        return SentenceModel({name: row for row, name in enumerate(names)}, weights)
    except ModelError:
        raise
    except (OSError, EOFError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ModelError(f"{source}: not a nerve sentence model ({exc})") from exc


@functools.cache
def model() -> SentenceModel:
    """The packaged model, read on first use; a missing or corrupt file logs a warning once and
    gives an empty model, which scores every language alike (the word votes decide alone)."""
    path = resources.files("nerve.language") / "model" / MODEL
    try:
        return parse(path.read_bytes(), str(path))
    except OSError as exc:
        log.warning("sentence model unavailable (%s: %s): word votes only", path, exc)
    except ModelError as exc:
        log.warning("sentence model unavailable: %s: word votes only", exc)
    return SentenceModel({}, np.zeros((0, len(INDIC))))
