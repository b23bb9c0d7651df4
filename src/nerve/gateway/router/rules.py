"""The rule layer: each route's regexes, compiled once, case-insensitive; first route in order wins.

Python's `re` cannot skip ahead on patterns that start with `\\b` or an alternation under
IGNORECASE: 50 such rules over a 2 KB prompt cost ~2 ms. So each rule also carries *needles*,
derived once from its parsed pattern: literals of which every match contains at least one. Needles
the pattern bounds by `\\b` on both sides are whole words, looked up in the text's word set; the
others are substrings of the case-folded text. Only a rule whose needles are present, or that has
none (`\\d+\\s*[*/]\\s*\\d+`), runs its regex. The needles never change the answer, only its cost.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Rule", "RuleSet", "fold"]

# The regex parser is a private module; it is used only to derive needles. If it ever changes,
# a rule just gets no needles and its regex always runs: correct, slower.
try:
    _parser: Any = importlib.import_module("re._parser")
    _c: Any = importlib.import_module("re._constants")
    _REPEATS: tuple[Any, ...] = (_c.MAX_REPEAT, _c.MIN_REPEAT, _c.POSSESSIVE_REPEAT)
except (ImportError, AttributeError):  # pragma: no cover - depends on the Python version
    _parser = _c = None
    _REPEATS = ()

_WORD = re.compile(r"\w+")
_MAX_STRINGS = 64  # expansions of one literal run kept as needles, e.g. `(a|b)(c|d)s?` -> 8
_MIN_SELECTIVITY = 3  # a needle "in" or a 1-letter word is in nearly every text: no filter

# IGNORECASE treats these as the same letter although str.lower() does not (re/_casefix.py);
# text and needles both map to one representative so a needle never rules out a real match.
_SAME = ("\u0069\u0131", "\u0073\u017f", "\u00b5\u03bc", "\u0345\u03b9\u1fbe", "\u0390\u1fd3",
         "\u03b0\u1fe3", "\u03b2\u03d0", "\u03b5\u03f5", "\u03b8\u03d1", "\u03ba\u03f0",
         "\u03c0\u03d6", "\u03c1\u03f1", "\u03c2\u03c3", "\u03c6\u03d5", "\u0432\u1c80",
         "\u0434\u1c81", "\u043e\u1c82", "\u0441\u1c83", "\u0442\u1c84\u1c85", "\u044a\u1c86",
         "\u0463\u1c87", "\u1c88\ua64b", "\u1e61\u1e9b", "\ufb05\ufb06")  # fmt: skip
_EQUIV = {ord(ch): group[0] for group in _SAME for ch in group[1:]}


def fold(text: str) -> str:
    """Case-fold the way IGNORECASE compares letters (lowercase, plus the extra equivalences)."""
    if text.isascii():
        return text.lower()
    return text.replace("İ", "i").lower().translate(_EQUIV)


@dataclass(frozen=True, slots=True)
class Rule:
    route: str
    pattern: str
    regex: re.Pattern[str]
    groups: tuple[frozenset[str], ...]  # a text can match if it holds every word of one group
    phrases: tuple[str, ...]  # or one of these substrings; both empty: the regex always runs


class RuleSet:
    """All routes' rules in cascade order: routes in list order, each route's rules in order."""

    def __init__(self, routes: Sequence[tuple[str, Sequence[str]]]) -> None:
        self.rules = tuple(
            Rule(name, p, re.compile(p, re.IGNORECASE), *needles(p))
            for name, patterns in routes
            for p in patterns
        )
        self._by_word: dict[str, list[int]] = {}  # a group's longest word -> its rules
        self._always: list[int] = []  # rules with phrases or no needles: always looked at
        for i, rule in enumerate(self.rules):
            if rule.phrases or not rule.groups:
                self._always.append(i)
            for word in {max(sorted(g), key=len) for g in rule.groups}:
                self._by_word.setdefault(word, []).append(i)
        self._vocabulary = frozenset(self._by_word)

    def match(self, text: str) -> Rule | None:
        """The first rule (of the first route in order) that matches `text`, else None."""
        if not self.rules:
            return None
        folded = fold(text)
        tokens = frozenset(_words(folded))
        candidates = set(self._always)
        for word in self._vocabulary & tokens:
            candidates.update(self._by_word[word])
        for rule in (self.rules[i] for i in sorted(candidates)):
            if (rule.groups or rule.phrases) and not (
                any(g <= tokens for g in rule.groups) or any(p in folded for p in rule.phrases)
            ):
                continue
            if rule.regex.search(text):
                return rule
        return None


_ASCII_SPLIT = str.maketrans({c: " " for c in map(chr, range(128)) if not c.isalnum()} | {"_": "_"})


def _words(folded: str) -> list[str]:
    """The text's `\\w+` words; for ASCII, a translate and a split are 2x faster than the regex."""
    return folded.translate(_ASCII_SPLIT).split() if folded.isascii() else _WORD.findall(folded)


# (groups of whole words, substrings): a match holds every word of one group or one substring
_Needles = tuple[frozenset[frozenset[str]], frozenset[str]]


def needles(pattern: str) -> tuple[tuple[frozenset[str], ...], tuple[str, ...]]:
    """The needles of `pattern`, case-folded: (word groups, phrases); empty if none is selective."""
    try:
        found = _sequence(list(_parser.parse(pattern, re.IGNORECASE))) if _parser else None
    except Exception:  # an unfamiliar parse tree: no needles, the regex always runs
        found = None
    if found is None:
        return (), ()
    groups = {frozenset(map(fold, g)) for g in found[0]}
    minimal = tuple(g for g in groups if not any(o < g for o in groups))  # o < g: g is redundant
    return minimal, tuple({fold(p) for p in found[1]})


def _selectivity(n: _Needles) -> int:
    # a whole word is rarer than the same letters as a substring ("sed" inside "discussed")
    return min([sum(len(w) + 1 for w in g) for g in n[0]] + [len(p) for p in n[1]])


def _sequence(items: list[tuple[Any, Any]]) -> _Needles | None:
    """The cheapest selective needles of a sequence: from its finite literal runs or groups."""
    candidates: list[_Needles] = []
    run: set[str] = {""}
    bounded = False  # the current run starts at a word boundary

    def close(right_bounded: bool) -> None:
        if "" in run:
            return
        groups: set[frozenset[str]] = set()
        phrases: set[str] = set()
        for s in run:
            whole = frozenset(  # the words the match holds entire, not as part of a longer word
                m.group()
                for m in _WORD.finditer(s)
                if (m.start() > 0 or bounded) and (m.end() < len(s) or right_bounded)
            )
            if whole:
                groups.add(whole)
            else:
                phrases.add(s)
        candidates.append((frozenset(groups), frozenset(phrases)))

    for op, av in items:
        if op is _c.AT and av is _c.AT_BOUNDARY:
            close(True)
            run, bounded = {""}, True
            continue
        strings = _finite(op, av)
        if strings is not None and len(run) * len(strings) <= _MAX_STRINGS:
            run = {a + b for a in run for b in strings}
            continue
        edge = _non_word(op, av)  # `\s+` between runs bounds the words on both sides
        close(edge)
        run, bounded = strings or {""}, edge
        if strings is None and (nested := _nested(op, av)) is not None:
            candidates.append(nested)
    close(False)
    usable = [n for n in candidates if _selectivity(n) >= _MIN_SELECTIVITY]
    # a word is a set lookup, a phrase a scan of the text (~1 µs per 2 KB): fewest scans first
    return min(usable, key=lambda n: (len(n[1]), -_selectivity(n)), default=None)


def _non_word(op: Any, av: Any) -> bool:
    """Whether this item only ever matches one or more non-word characters (`\\s+`, `\\W`)."""
    if op in _REPEATS:
        return bool(av[0] >= 1 and len(av[2]) == 1 and _non_word(*av[2][0]))
    return bool(
        op is _c.IN
        and all(o is _c.CATEGORY and a in (_c.CATEGORY_SPACE, _c.CATEGORY_NOT_WORD) for o, a in av)
    )


def _nested(op: Any, av: Any) -> _Needles | None:
    """Needles of a group that has no small finite expansion, e.g. `(foo\\w+|bar)`."""
    if op is _c.SUBPATTERN or (op in _REPEATS and av[0] >= 1):
        return _sequence(list(av[-1]))
    if op is _c.BRANCH:
        alternatives = [_sequence(list(branch)) for branch in av[1]]
        if all(alternatives):
            groups, phrases = zip(*(a for a in alternatives if a), strict=True)
            return frozenset().union(*groups), frozenset().union(*phrases)
    return None


def _finite(op: Any, av: Any) -> set[str] | None:
    """Every string this item can match, when that is a small finite set; else None."""
    if op is _c.LITERAL:
        return {chr(av)}
    if op is _c.AT or op is _c.ASSERT or op is _c.ASSERT_NOT:
        return {""}  # zero-width: what matches on either side stays adjacent
    if op is _c.IN and all(o is _c.LITERAL for o, _ in av) and len(av) <= 8:
        return {chr(a) for _, a in av}
    if op is _c.SUBPATTERN:
        return _product([list(av[-1])])
    if op is _c.BRANCH:
        alternatives = [_product([list(branch)]) for branch in av[1]]
        if all(a is not None for a in alternatives):
            return set().union(*(a for a in alternatives if a is not None))
    if op in _REPEATS and av[1] <= 3:  # x?, x{0,3}: each count of the item spelt out
        repeats = [_product([list(av[2])] * count) for count in range(av[0], av[1] + 1)]
        if all(r is not None for r in repeats):
            out = set().union(*(r for r in repeats if r is not None))
            return out if len(out) <= _MAX_STRINGS else None
    return None


def _product(sequences: list[list[tuple[Any, Any]]]) -> set[str] | None:
    """The strings the sequences match one after another, if finite and few."""
    out = {""}
    for op, av in (item for sequence in sequences for item in sequence):
        strings = _finite(op, av)
        if strings is None or len(out) * len(strings) > _MAX_STRINGS:
            return None
        out = {a + b for a in out for b in strings}
    return out
