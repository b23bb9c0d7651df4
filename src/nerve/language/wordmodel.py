"""Which Indic language a romanized word belongs to, from people's own spellings (SPEC LG-1).

The model in `model/romanized.json.gz` is derived from the train lexicons of Google's Dakshina
v1.0 (CC BY-SA 4.0; see `model/README.md`, rebuilt by `scripts/build_language_model.py`): for
Hindi, Tamil, Telugu, Kannada, Malayalam and Bengali, every romanized spelling people wrote for
a Wikipedia word, and character n-gram counts of those spellings. `loglik(word)` gives, per
Indic language, log P(word | language): the word table when the language attests the spelling,
mixed with an interpolated character 4-gram model that scores any string. A spelling weighs
its attestation (common 2, rare 1) plus how often it occurs in the pure-Indic tune sentences of
Dakshina's dev set (lines 1-2,500 only; `freq`), so `hai` outweighs a spelling written once;
`indic_usage` names the languages whose sentences use an English spelling (`a`, `in`, `per`)
often, so that the sentence settles it; `loaned` those that use an English word as their own
now and then (`run`, `channel`, `test` in Bengali), and `used` says whether any does at all.
The character model counts the tune sentences' words too (`--char-tune`), so that inflected
forms no lexicon lists (`awardulu`, `memberayum`) look like their language. Summed over a
sentence, these are a naive Bayes over words: what tells Tamil from Malayalam is the whole
sentence, not any one word. Loaded once, on first use (~0.1-0.3 s).
"""

from __future__ import annotations

import functools
import gzip
import logging
import math
from importlib import resources
from importlib.resources.abc import Traversable

import orjson

from nerve.language.tokens import ELONGATED, INDIC

ORDER = (*INDIC, "en")  # the model's languages: `loglik` gives one value each, in this order

MODEL = "romanized.json.gz"
_WORD_WEIGHT = 0.9  # P(word) mixes the word table (attested spellings) with the char model
_LAMBDAS = (0.05, 0.15, 0.3, 0.5)  # char model: weights of orders 1..4
_UNSEEN = 1e-4  # probability of a character no training spelling has
_FREQ_WEIGHT = 1.0  # a word seen n times in a language's tune sentences weighs this * n more
# An English function word seen this many times per tune sentence of a language is also its
# word (`a`, `i`, `in`, `per`); an English content word, loaned, needs twice as many to be
# settled by the sentence, and two thirds as many to be a loanword of the language.
_FREQ_SHARE = 0.003
_FREQ_SHARE_CONTENT = 0.006
_LOAN_SHARE = 0.002
log = logging.getLogger(__name__)


class ModelError(RuntimeError):
    """The packaged word model is missing or unreadable; names the file."""


class WordModel:
    """Per-language attested spellings and character n-gram counts."""

    def __init__(self, data: dict[str, object]) -> None:
        langs = data["langs"]
        if not isinstance(langs, list) or sorted(langs) != sorted(ORDER):
            raise ModelError(f"{MODEL}: expected languages {ORDER}, got {langs!r}")
        common, rare = data["common"], data["rare"]
        grams, gram_counts = data["grams"], data["gram_counts"]
        assert isinstance(common, dict) and isinstance(rare, dict)
        assert isinstance(grams, str) and isinstance(gram_counts, dict)
        self.common = tuple(frozenset(common[lang].split()) for lang in ORDER)
        self.rare = tuple(frozenset(rare[lang].split()) for lang in ORDER)
        freq = data.get("freq") or {}
        assert isinstance(freq, dict)
        self.freq = tuple(_counts(str(freq.get(lang, ""))) for lang in ORDER)
        sentences = data.get("sentences") or {}
        assert isinstance(sentences, dict)
        self._sentences = tuple(float(sentences.get(lang, 0)) for lang in ORDER[:-1])
        # Attested spellings weigh their attestation (a common one twice a rare one), plus how
        # often people wrote the word in real sentences of the language.
        self._types = tuple(
            2 * len(c) + len(r) + _FREQ_WEIGHT * sum(f.values())
            for c, r, f in zip(self.common, self.rare, self.freq, strict=True)
        )
        self.loaded = bool(grams)
        names = grams.split(" ") if grams else []
        self._grams = tuple(dict(zip(names, gram_counts[lang], strict=True)) for lang in ORDER)
        # Totals of the 1-grams, summed over their positions only: not a pass over each table.
        ones = [i for i, name in enumerate(names) if len(name) == 1]
        self._unigrams = tuple(sum(gram_counts[lang][i] for i in ones) for lang in ORDER)
        self.loglik = functools.lru_cache(maxsize=32768)(self._loglik)
        self.indic_usage = functools.lru_cache(maxsize=4096)(self._indic_usage)
        self.loaned = functools.lru_cache(maxsize=4096)(self._loaned)

    def attested(self, word: str) -> int:
        """2 when some Indic language attests `word` more than once, 1 once, 0 never."""
        if any(word in c for c in self.common[:-1]):
            return 2
        return 1 if any(word in r for r in self.rare[:-1]) else 0

    def _indic_usage(self, word: str, function: bool) -> frozenset[str]:
        """The Indic languages whose real (tune) sentences use `word` often: `a`, `i`, `in`,
        `per` are English function words, and also Bengali, Kannada, Hindi, Malayalam words;
        `college` is a loan that Bengali uses as its own. At least twice, in any case."""
        share = _FREQ_SHARE if function else _FREQ_SHARE_CONTENT
        return frozenset(
            lang
            for lang, f, n in zip(INDIC, self.freq, self._sentences, strict=False)
            if f.get(word, 0) >= max(2.0, share * n)
        )

    def _loaned(self, word: str) -> frozenset[str]:
        """The Indic languages whose tune sentences use the English word `word` now and then,
        twice at least: as a loanword (`run`, `test` in Bengali; `movie` in Hindi)."""
        return frozenset(
            lang
            for lang, f, n in zip(INDIC, self.freq, self._sentences, strict=False)
            if f.get(word, 0) >= max(2.0, _LOAN_SHARE * n)
        )

    def used(self, word: str) -> bool:
        """Do the tune sentences of any Indic language use `word` twice or more?"""
        return any(word in f for f in self.freq[:-1])

    def form(self, word: str) -> str:
        """The form of a stretched word (`bossuuuu`) to score: cut to two letters, or one, as
        whichever is attested; two when neither is."""
        if ELONGATED.search(word) is None:
            return word
        two, one = ELONGATED.sub(r"\1\1", word), ELONGATED.sub(r"\1", word)
        if not self.attested(two) and self.attested(one):
            return one
        return two

    def _loglik(self, word: str) -> tuple[float, ...]:
        out = []
        for k in range(len(ORDER)):
            weight = 2.0 if word in self.common[k] else 1.0 if word in self.rare[k] else 0.0
            weight += _FREQ_WEIGHT * self.freq[k].get(word, 0)
            p_char = math.exp(self._char_logprob(word, k))
            p_word = weight / self._types[k] if self._types[k] else 0.0
            out.append(math.log(_WORD_WEIGHT * p_word + (1 - _WORD_WEIGHT) * p_char))
        return tuple(out)

    def _char_logprob(self, word: str, k: int) -> float:
        """log P(word$ | ^) under language k's interpolated 4-gram model over characters."""
        table, unigrams = self._grams[k], self._unigrams[k]
        padded = f"^{word}$"
        total = 0.0
        for i in range(1, len(padded)):
            ch = padded[i]
            p = _LAMBDAS[0] * (table.get(ch, 0) / unigrams if unigrams else 0.0)
            for n in (2, 3, 4):
                if i - n + 1 < 0:
                    break
                history = padded[i - n + 1 : i]
                seen = table.get(history, 0)
                if seen:
                    p += _LAMBDAS[n - 1] * table.get(history + ch, 0) / seen
            total += math.log(p + _UNSEEN)
        return total


def _counts(text: str) -> dict[str, int]:
    """`word:count word:count` -> {word: count}."""
    out = {}
    for item in text.split():
        word, _, count = item.rpartition(":")
        out[word] = int(count)
    return out


def parse(blob: bytes, source: str = MODEL) -> WordModel:
    """A model from the gzipped JSON bytes; ModelError naming `source` when unreadable."""
    try:
        data = orjson.loads(gzip.decompress(blob))
        return WordModel(data)
    except ModelError:
        raise
    except (OSError, EOFError, ValueError, KeyError, TypeError, AssertionError) as exc:
        raise ModelError(f"{source}: not a nerve language model ({exc})") from exc


def empty() -> WordModel:
    """A model that attests nothing and scores every language alike: the fallback."""
    blank = {lang: "" for lang in ORDER}
    counts: dict[str, list[int]] = {lang: [] for lang in ORDER}
    data: dict[str, object] = {
        "langs": list(ORDER),
        "common": blank,
        "rare": blank,
        "grams": "",
        "gram_counts": counts,
    }
    return WordModel(data)


def read(path: Traversable) -> WordModel:
    """The model at `path`; ModelError naming it when missing or corrupt."""
    try:
        blob = path.read_bytes()
    except OSError as exc:
        raise ModelError(
            f"{path}: missing ({exc}); rebuild with scripts/build_language_model.py"
        ) from exc
    return parse(blob, str(path))


@functools.cache
def model() -> WordModel:
    """The packaged model, read on first use. Detection is on the request path and must not
    fail: a missing or corrupt file logs a warning once and gives the empty model, and
    detection falls back to the curated lexicons alone."""
    try:
        return read(resources.files("nerve.language") / "model" / MODEL)
    except ModelError as exc:
        log.warning("language model unavailable, using the curated lexicons only: %s", exc)
        return empty()
