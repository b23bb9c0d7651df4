"""Who a message is for, over which channel, and what it says (IN-2, send_message).

English names the person after the verb ("message Jane", "send the report to Priya"); Hindi and
the Dravidian languages before it, marked by a postposition ("Priya ko message bhejo", "Priya ge
kalisu") or a glued dative ("Priyakku anuppu").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from nerve.intent.lexicon import CHANNELS, NOT_NAMES, RECIPIENT_MARKERS, VERBS, words

__all__ = ["PRONOUNS", "SELF", "channel", "content", "recipient"]

_I = re.IGNORECASE
_NAME = (
    r"([\w.+-]+@[\w-]+(?:\.[\w-]+)+"  # an address
    r"|(?-i:[A-Z][\w'.-]*\s+(?:and|aur|&)\s+[A-Z][\w'.-]*)"  # "Dylan and Ben"
    r"|[A-Za-z][\w'.-]*)"
)
_TO_NAME = re.compile(r"\b(?:to|for|with)\s+(?:my\s+|our\s+|the\s+)?" + _NAME, _I)
_OBJ_NAME = re.compile(r"^\s+(?:to\s+)?(my\s+|our\s+|the\s+|an?\s+|this\s+)?" + _NAME, _I)
_WORD = re.compile(r"[\w'-]+")
_MARKERS = frozenset(RECIPIENT_MARKERS)
# Hindi ki/ke/se are also "of"/"that"/"from": they mark a recipient only right before the verb,
# unless the language whose dative they are was detected (Telugu "Priya ki", Bengali "Priya ke").
_WEAK_MARKERS = {"ki": "te", "ke": "bn", "se": ""}
_SUFFIXES = ("ukku", "kku", "inu")  # Tamil/Malayalam datives glued to the name: Priyakku
_PERSON_VERBS = frozenset(
    words(
        "message, msg, text, email, e-mail, mail, tell, ask, let, ping, notify, inform",
        "dm, whatsapp, sms, reply, contact, write, call",
    )
)
_ENGLISH_CUES = _PERSON_VERBS | frozenset(VERBS["send_message"])
_BETWEEN = frozenset(
    words(
        "message, msg, text, sms, email, mail, ek, ye, yeh, oru, ondu, oka, ekta",
    )
)
SELF = frozenset(
    words(
        "me, us, myself, ourselves, mujhe, muje, mujhko, hume, humein, hamein, enakku",
        "enaku, naaku, nanage, nanna, enikku, amake, amay, amader",
    )
)
PRONOUNS = frozenset(
    words(
        "him, her, them, usey, use, unhe, usko, unko, avanukku, avalukku",
    )
)


def _is_name(word: str) -> bool:
    low = word.lower()
    return low not in NOT_NAMES and low not in CHANNELS and low not in SELF and len(word) > 1


def recipient(text: str, start: int, end: int, languages: Sequence[str] = ()) -> str | None:
    """Whom a message at cue text[start:end] is for: "to Priya", "message Jane", "Priya ko"."""
    name = _recipient(text, start, end, languages)
    return name.rstrip(".'-") or None if name else None


def _recipient(text: str, start: int, end: int, languages: Sequence[str]) -> str | None:
    verb = text[start:end].lower()
    if verb in _ENGLISH_CUES:
        m = _OBJ_NAME.match(text[end:])
        det = (m.group(1) or "").strip().lower() if m else ""
        obj = m.group(2) if m else ""
        if obj.lower() in PRONOUNS:
            return None  # "text her to come home": someone, but not named
        bare = bool(obj) and not det and _is_name(obj.split()[0])
        if bare and verb in _PERSON_VERBS:
            return obj  # "message Jane"
        to = _TO_NAME.search(text, end, min(len(text), end + 80))
        if to and _is_name(to.group(1).split()[0]):
            return to.group(1)  # "send the report to Priya"
        if bare and obj[0].isupper():
            return obj  # "send Priya the file"
        if obj and verb in _PERSON_VERBS and det in ("my", "our") and _is_name(obj.split()[0]):
            return obj  # "message my dad happy birthday"
    tokens = [(m.group(), m.start()) for m in _WORD.finditer(text, 0, start)]
    for i, (word, _) in enumerate(tokens[:-1]):
        marker, at = tokens[i + 1]
        if marker.lower() not in _MARKERS or not _is_name(word):
            continue
        between = text[at + len(marker) : start].lower().split()
        weak = _WEAK_MARKERS.get(marker.lower())
        if weak is not None and weak not in languages and not set(between) <= _BETWEEN:
            continue
        return word
    for word, _ in tokens:
        low = word.lower()
        stem = next((word[: -len(x)] for x in _SUFFIXES if low.endswith(x)), "")
        if len(stem) > 2 and _is_name(stem) and low not in NOT_NAMES:
            return stem
    return None


_CHANNEL = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, CHANNELS)) + r")(?![\w-])", _I)


def channel(text: str) -> str | None:
    """The first channel named: "on whatsapp", "email lo", "slack pe"."""
    m = _CHANNEL.search(text)
    return CHANNELS[m.group(1).lower()] if m else None


_SAYING = re.compile(r"(?:\bthat\s+says|\bsaying|\bsay|\bthat|\bki|:)\s*,?\s+(.+)$", _I)
_SENT_OBJ = re.compile(r"^\s+(?:the\s+|a\s+|an\s+|my\s+|this\s+|our\s+)?(.+?)\s+(?:to|with)\s+", _I)
_MESSAGE_NOUN = re.compile(r"^(?:message|text|msg|note|email|mail|sms|dm)$", _I)


def content(text: str, start: int, end: int) -> str | None:
    """What a message says ("... that I'm late", "... ki main late hoon") or what it carries."""
    m = _SAYING.search(text, end)
    if m:
        return m.group(1).strip(" .")[:500] or None
    m = _SENT_OBJ.match(text[end:])
    if m and not _MESSAGE_NOUN.match(m.group(1)):
        return m.group(1)
    return None
