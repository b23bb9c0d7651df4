"""Words of a text and the script each is written in (SPEC LG-1).

A token is a run of Latin letters (with inner apostrophes: `what's`) or a run of letters of one
Indic script block. Each Indic block of Unicode is 128 code points wide, so a token's language is
its block: Devanagari -> hi, Bengali -> bn, Tamil -> ta, Telugu -> te, Kannada -> kn, Malayalam
-> ml. Gurmukhi, Gujarati and Oriya are recognised as tokens but belong to no supported language.
Digits, punctuation and other scripts are not tokens: they carry no evidence.
"""

from __future__ import annotations

import re
import unicodedata

LANGS = ("en", "hi", "ta", "te", "kn", "ml", "bn")
INDIC = LANGS[1:]

_ZW = "\u200c\u200d"  # zero-width (non-)joiners live inside Indic words
TOKEN = re.compile(
    r"[A-Za-z\u00c0-\u024f]+(?:'[A-Za-z]+)*"
    rf"|[\u0900-\u0963\u0966-\u097f{_ZW}]+"  # Devanagari without the dandas (shared punctuation)
    rf"|[\u0980-\u09ff{_ZW}]+"
    rf"|[\u0a00-\u0a7f{_ZW}]+|[\u0a80-\u0aff{_ZW}]+|[\u0b00-\u0b7f{_ZW}]+"
    rf"|[\u0b80-\u0bff{_ZW}]+|[\u0c00-\u0c7f{_ZW}]+|[\u0c80-\u0cff{_ZW}]+|[\u0d00-\u0d7f{_ZW}]+"
)

# Blocks from U+0900, 128 code points each.
_BLOCKS: tuple[str | None, ...] = ("hi", "bn", None, None, None, "ta", "te", "kn", "ml")
ELONGATED = re.compile(r"(.)\1{2,}")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def script_lang(token: str) -> str | None:
    """The language of a native-script token, "latin" for a Latin one, None for other scripts."""
    for ch in token:
        cp = ord(ch)
        if cp < 0x900:
            return "latin"
        if cp < 0xD80:
            return _BLOCKS[(cp - 0x900) >> 7]
    return None  # only joiners


def fold(word: str) -> str:
    """The lookup form of a word: lower case, NFC, without zero-width joiners."""
    if word.isascii():
        return word.lower()
    return unicodedata.normalize("NFC", word.lower()).replace("\u200c", "").replace("\u200d", "")


def lookup_forms(word: str) -> tuple[str, ...]:
    """Forms of a word to look up, best first: the folded word and, when the writer stretched a
    letter (`karooo`, `baaaarish`), the stretch cut to two letters and to one."""
    folded = fold(word)
    if ELONGATED.search(folded) is None:
        return (folded,)
    return (ELONGATED.sub(r"\1\1", folded), ELONGATED.sub(r"\1", folded))


def scrub(text: str) -> str:
    """`text` with lone surrogates replaced by U+FFFD, so results always encode as UTF-8/JSON."""
    return _SURROGATE.sub("\ufffd", text)
