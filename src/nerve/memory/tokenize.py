"""The terms that memory search indexes and matches (SPEC ME-2): words, folded and stemmed.

A word is a run of letters and digits in any script. Indic vowel signs and viramas are combining
marks, which Python's `\\w` does not count as letters, so their blocks are named outright: without
that `हिन्दी` would fall apart into single consonants. Han, kana and Hangul are written without
spaces, so their runs become overlapping character pairs (the usual CJK bigram indexing).
English possessives lose their `'s`; English stop words are dropped (on LoCoMo keeping them cost
4.5 points of recall@10); the rest goes through the Snowball English stemmer, which leaves words
of other scripts as they are and treats romanized Indic words like any other Latin word, the same
way on both sides of a match.
"""

from __future__ import annotations

import re
import unicodedata

import Stemmer  # type: ignore[import-not-found]  # a C extension without stubs

__all__ = ["STOP_WORDS", "terms"]

_MARKS = "\u0300-\u036f\u0900-\u0963\u0966-\u0dff\u200c\u200d"  # combining Latin, Indic blocks
_PART = rf"[\w{_MARKS}]+"
_WORD = re.compile(rf"{_PART}(?:['’]{_PART})*")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")
_STEMMER = Stemmer.Stemmer("english")

# Function words, apostrophes removed the way `terms` removes them (don't -> dont).
_STOP = """
    a about above after again against all am an and any are as at be because been before
    being below between both but by can cannot could couldnt d did didnt do does doesnt doing
    dont down during each few for from further had hadnt has hasnt have havent having he hed
    hell her here heres hers herself hes him himself his how hows i id if ill im in into is
    isnt it its itself ive lets ll m me more most mustnt my myself no nor not now o of off on
    once only or other ought our ours ourselves out over own re s same shant she shed shell
    shes should shouldnt so some such t than that thats the their theirs them themselves then
    there theres these they theyd theyll theyre theyve this those through to too under until
    up ve very was wasnt we wed well were werent weve what whats when whens where wheres which
    while who whom whos why whys will with wont would wouldnt y you youd youll your youre
    yours yourself yourselves youve
"""
STOP_WORDS = frozenset(_STOP.split())


def _fold(text: str) -> str:
    if text.isascii():
        return text.lower().replace("_", " ")
    return unicodedata.normalize("NFKC", text).casefold().replace("_", " ")


def _split(word: str) -> list[str]:
    """A non-ASCII word: its CJK runs as character pairs, the rest as it is."""
    if not _CJK.search(word):
        return [word]
    out: list[str] = []
    start = 0
    for run in _CJK.finditer(word):
        if run.start() > start:
            out.append(word[start : run.start()])
        chars = run.group()
        out.extend(chars[i : i + 2] for i in range(max(1, len(chars) - 1)))
        start = run.end()
    if start < len(word):
        out.append(word[start:])
    return out


def terms(text: str, stop_words: frozenset[str] = STOP_WORDS) -> list[str]:
    """The index terms of `text`, in order, repeats kept (they are term frequencies);
    `stop_words` are dropped (pass an empty set to keep every word)."""
    words: list[str] = []
    for word in _WORD.findall(_fold(text)):
        if "'" in word or "’" in word:
            word = word.replace("’", "'")
            word = (word[:-2] if word.endswith("'s") else word).replace("'", "")
        if word in stop_words:
            continue
        if word.isascii():
            words.append(word)
        else:
            words.extend(_split(word))
    stems: list[str] = _STEMMER.stemWords(words)
    return stems
