"""The lexicon compiled into lookup tables and matched over word tokens in one pass.

A regex alternation of a few hundred cue words is tried at every character; a dict lookup per
token is an order of magnitude cheaper, and it is what keeps `classify_rules` in microseconds.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from nerve.intent.lexicon import (
    AMBIGUOUS_QUESTION_WORDS,
    INDIC,
    NOT_QUESTION_OPENERS,
    NOUNS,
    QUESTION_WORDS_EN,
    QUESTION_WORDS_INDIC,
    RELAY,
    REPORT_MAKERS,
    VERBS,
)

__all__ = ["CUES", "QUESTION_OPENERS", "Hit", "Token", "question_openers", "tokenize"]

_WORD = re.compile(r"\w+(?:['-]\w+)*")
_GAP_WORD = re.compile(r"(\W*)(\w+(?:['-]\w+)*)")
_BREAKS = frozenset('.,;:!?"(\n')
_ENDS = frozenset(".!?\n")


@dataclass(frozen=True, slots=True)
class Token:
    word: str  # lower-cased
    start: int
    end: int
    opens: bool  # first word of a clause
    sentence: bool = False  # first word of a sentence: the text's, or after . ! ? or a new line


@dataclass(frozen=True, slots=True)
class Hit:
    kind: str  # verb | indic | noun | maker | relay | question | question:<lang>
    intent: str  # the intent it points to ("" for questions and relays)
    first: int  # token indices, inclusive
    last: int
    word: str  # the matched words, lower-cased
    rest: str = ""  # what follows a stem in its last word: "o" for hata* in "hatao"


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    for m in _GAP_WORD.finditer(text):
        gap = m.group(1)
        opens = not tokens or (gap not in ("", " ") and not _BREAKS.isdisjoint(gap))
        sentence = not tokens or (opens and not _ENDS.isdisjoint(gap))
        tokens.append(Token(m.group(2).lower(), m.start(2), m.end(), opens, sentence))
    return tokens


def _words(phrase: str) -> tuple[str, ...]:
    return tuple(w.lower() for w in _WORD.findall(phrase))


class _Index:
    """Phrases of one or more words; the last word may be a stem (`hata*`)."""

    def __init__(self, entries: Iterable[tuple[str, str, str]]) -> None:
        self.exact: dict[str, list[tuple[str, str]]] = defaultdict(list)
        self.stems: dict[str, list[tuple[str, str]]] = defaultdict(list)
        self.phrases: dict[str, list[tuple[tuple[str, ...], bool, str, str]]] = defaultdict(list)
        for phrase, kind, intent in entries:
            stem = phrase.endswith("*")
            words = _words(phrase.rstrip("*"))
            if len(words) > 1:
                self.phrases[words[0]].append((words[1:], stem, kind, intent))
            elif stem:
                self.stems[words[0]].append((kind, intent))
            else:
                self.exact[words[0]].append((kind, intent))
        self.stem_lengths = sorted({len(s) for s in self.stems})

    def hits(self, tokens: list[Token]) -> list[Hit]:
        found: list[Hit] = []
        for i, token in enumerate(tokens):
            word = token.word
            for kind, intent in self.exact.get(word, ()):
                found.append(Hit(kind, intent, i, i, word))
            for n in self.stem_lengths:
                if n > len(word):
                    break
                for kind, intent in self.stems.get(word[:n], ()):
                    found.append(Hit(kind, intent, i, i, word, word[n:]))
            for rest, stem, kind, intent in self.phrases.get(word, ()):
                j = i + len(rest)
                if j >= len(tokens):
                    continue
                tail = [t.word for t in tokens[i + 1 : j + 1]]
                ok = tail[:-1] == list(rest[:-1]) and (
                    tail[-1].startswith(rest[-1]) if stem else tail[-1] == rest[-1]
                )
                if ok:
                    after = tail[-1][len(rest[-1]) :] if stem else ""
                    found.append(Hit(kind, intent, i, j, " ".join([word, *tail]), after))
        return found


def _entries() -> Iterable[tuple[str, str, str]]:
    for kind, table in (("verb", VERBS), ("indic", INDIC), ("noun", NOUNS)):
        for intent, words in table.items():
            if intent != "generate_report" or kind != "verb":  # makers need a report noun
                yield from ((w, kind, intent) for w in words)
    yield from ((w, "maker", "generate_report") for w in REPORT_MAKERS)
    yield from ((w, "relay", "") for w in RELAY)
    yield from ((w, "question", "") for w in QUESTION_WORDS_INDIC)
    for lang, words in AMBIGUOUS_QUESTION_WORDS.items():
        yield from ((w, f"question:{lang}", "") for w in words)


CUES = _Index(_entries())
QUESTION_OPENERS = frozenset(QUESTION_WORDS_EN)


def question_openers(languages: Sequence[str]) -> frozenset[str]:
    """English question openers, less those that are plain words in a detected language."""
    drop = {w for lang in languages for w in NOT_QUESTION_OPENERS.get(lang, ())}
    return QUESTION_OPENERS - drop if drop else QUESTION_OPENERS
