"""Parameters read around the winning cue: formats, targets, report hints (IN-2).

Every function takes the cleaned request text and returns what it found, or None. English puts the
object after the verb ("delete the users table"); Hindi and the Dravidian languages put it before
("users table delete karo"), so a target is read on the side of the cue that holds words.
Recipients live in messages.py, destructive action hints in actions.py.
"""

from __future__ import annotations

import re
from collections.abc import Set
from typing import NamedTuple

from nerve.intent.lexicon import FILLERS, LIGHT_VERBS, POSTPOSITIONS, QUESTION_WORDS_INDIC, words
from nerve.intent.model import FORMATS, normalize_format

__all__ = ["Formats", "formats", "report_hints", "target", "trim"]

_I = re.IGNORECASE


def _words_rx(entries: tuple[str, ...] | list[str]) -> str:
    """An alternation of lexicon entries (longest first); `stem*` matches any ending."""
    parts = []
    for word in sorted(set(entries), key=len, reverse=True):
        stem = word.endswith("*")
        body = r"\s+".join(re.escape(w) for w in word.rstrip("*").split())
        parts.append(body + (r"\w*" if stem else ""))
    return r"(?<![\w-])(?:" + "|".join(parts) + r")(?![\w-])"


_FORMAT_WORDS = [k for k in FORMATS if k not in ("word", "text", "doc")] + ["ms word", "word doc"]
_FORMAT = re.compile(_words_rx(_FORMAT_WORDS), _I)
_FORMAT_TRIGGERS = frozenset(w for k in _FORMAT_WORDS for w in k.split())
_OUT_BEFORE = re.compile(r"\b(?:to|into|as|in)\s+(?:an?\s+|the\s+)?$", _I)
_IN_BEFORE = re.compile(
    r"(?:\bfrom\s+(?:an?\s+|the\s+)?|\.|\b(?:this|the|my|our|an?|is|ye|indha|ee|ei)\s+)$", _I
)
_OUT_AFTER = re.compile(
    r"^[\s-]*(?:mein|me|mai|mei|la|ku|ga|ge|ige|aaga|aagi|aakki|aakku|ilekku|ah|aa|te|format)\b", _I
)
_IN_AFTER = re.compile(r"^[\s-]*(?:ko|se|ninnu|nundi|inda|il\s+ninnu|theke|file|files)\b", _I)


class Formats(NamedTuple):
    source: str | None  # input_format
    target: str | None  # output_format
    mentions: int
    directed: bool  # a target is marked ("to json", "json mein"), not only guessed from order


def formats(text: str, seen: Set[str] | None = None) -> Formats:
    """The formats a request names and which way it converts. `seen`, the request's lower-cased
    words when known, lets a request that names no format skip the scan."""
    found: list[tuple[str, str | None]] = []  # (format, "in" | "out" | None)
    if seen is not None and not seen & _FORMAT_TRIGGERS:
        return Formats(None, None, 0, False)
    for m in _FORMAT.finditer(text):
        before, after = text[max(0, m.start() - 16) : m.start()], text[m.end() : m.end() + 16]
        role = None
        if _OUT_BEFORE.search(before) or _OUT_AFTER.search(after):
            role = "out"
        elif _IN_BEFORE.search(before) or _IN_AFTER.search(after):
            role = "in"
        found.append((normalize_format(m.group()), role))
    src = next((f for f, r in found if r == "in"), None)
    dst = next((f for f, r in found if r == "out"), None)
    directed = dst is not None
    for fmt, role in found:  # unmarked mentions fill the gaps: the source comes first
        if role is None and fmt not in (src, dst):
            if src is None and (dst is not None or len(found) > 1):
                src = fmt
            elif dst is None:
                dst = fmt
    return Formats(src, dst, len(found), directed)


_CLAUSE_END = re.compile(
    r"[.,;!?]|\s(?:and|then|aur|from|for|in|on|at|to|with|into|by|so|because|before|after|"
    r"ki|jo|ke\s+liye|that|which)\s",
    _I,
)
# Words after a cue that show the object came before it: light verbs, "tell"/"give" verbs.
_LIGHT = frozenset(LIGHT_VERBS) | frozenset(
    words(
        "please, pls, na, ji, now, it, them, batao, bataiye, bataye, batado, dikhao",
        "dikhaiye, do, dedo, dijiye, sollu, sollunga, kodu, kudu, cheppu, ivvu, helu",
        "kodi, parayu, tharu, tharoo, bolo, dao, din",
    )
)
# Trailing words that end a question, not a target: "weather kaisa hai".
_TAIL = frozenset(QUESTION_WORDS_INDIC) | frozenset(
    words(
        "hai, he, hain, h, hota, tha, thi, ho",
    )
)


def trim(phrase: str) -> str | None:
    """A phrase without the fillers and postpositions at its edges."""
    return _trim(phrase.split())


def _trim(phrase: list[str]) -> str | None:
    while phrase and phrase[0].lower() in FILLERS:
        phrase = phrase[1:]
    while phrase and phrase[-1].lower() in FILLERS | POSTPOSITIONS | _TAIL:
        phrase = phrase[:-1]
    return " ".join(phrase).strip(" '\"") or None


def target(text: str, start: int, end: int) -> str | None:
    """What the verb at text[start:end] acts on: after it in English, before it in SOV order."""
    rest = text[end:]
    stop = _CLAUSE_END.search(" " + rest + " ")
    after = (" " + rest + " ")[: stop.start()] if stop else rest
    following = [w for w in after.split() if w.strip("'\"")]
    while following and following[0].lower() in POSTPOSITIONS:  # "surukkam ah sollu"
        following.pop(0)
    if following and following[0].lower() not in _LIGHT:
        return _trim(following[:8])
    before = re.split(r"[.,;!?:]", text[:start])[-1].split()
    while before and before[-1].lower() in POSTPOSITIONS:
        before.pop()
    taken: list[str] = []
    for word in reversed(before[-6:]):
        if word.lower() in POSTPOSITIONS or word.lower() in FILLERS:
            break
        taken.insert(0, word)
    return _trim(taken)


_PERIOD = re.compile(
    r"\b(daily|weekly|monthly|quarterly|yearly|annual|(?:this|last|next|previous|past)\s+"
    r"(?:\d+\s+)?(?:day|week|month|quarter|year)s?|q[1-4](?:\s+\d{4})?|fy\s?\d{2,4}|"
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*(?:\s+\d{4})?|\d{4}|"
    r"today|yesterday|aaj|kal|is\s+(?:hafte|mahine|saal)|pichhle\s+(?:hafte|mahine|saal))\b",
    _I,
)
_SUBJECT_BEFORE = re.compile(r"((?:[\w-]+\s+){0,2}?[\w-]+)\s+(?:ka\s+|ki\s+|ke\s+)?reports?\b", _I)
_SUBJECT_AFTER = re.compile(
    r"\breports?\s+(?:on|about|for|of)\s+(?:the\s+)?([\w-]+(?:\s+[\w-]+)?)"
    r"|\breports?\s+(?:\w+\s+)?([\w-]+)\s+(?:ka|ki|ke|oda|dhi|da)\b",
    _I,
)
_NOT_SUBJECT = (
    FILLERS
    | POSTPOSITIONS
    | frozenset(
        words(
            "generate, create, make, prepare, build, new, full, detailed, quick, short",
            "do, send, report",
        )
    )
)


def report_hints(text: str) -> dict[str, str]:
    """A report's `subject` ("sales") and `period` ("last month", "weekly") when easy to see."""
    hints: dict[str, str] = {}
    period = _PERIOD.search(text)
    if period:
        hints["period"] = period.group(1).lower()
    m = _SUBJECT_BEFORE.search(text)
    kept = [w for w in (m.group(1).split() if m else []) if w.lower() not in _NOT_SUBJECT]
    if period:
        kept = [w for w in kept if w.lower() not in period.group(1).lower().split()]
    if not kept:
        m = _SUBJECT_AFTER.search(text)
        found = (m.group(1) or m.group(2)) if m else ""
        kept = [w for w in found.split() if w.lower() not in _NOT_SUBJECT]
        if period:
            kept = [w for w in kept if w.lower() not in period.group(1).lower().split()]
    if kept:
        hints["subject"] = " ".join(kept)
    return hints
