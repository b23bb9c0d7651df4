"""Personal data in a request, for private routes (SPEC TP-3): found, never echoed.

Five kinds, each a pattern plus a check that the match is what it looks like, because a private
route is usually a smaller local model and every false alarm costs answer quality:

    email    local@domain.tld, not the reserved example/test domains, not `git@host` or
             `user@host:/path` remotes, not `icon@2x.png` asset names
    phone    +91 and Indian mobile numbers (10 digits starting 6-9), and +<country> numbers of
             8 to 15 digits
    aadhaar  12 digits (groups of 4 allowed), first digit 2-9, valid Verhoeff check digit
    pan      Indian PAN: AAAAA9999A whose 4th letter is a holder type (P, C, H, F, A, T, B, L,
             J, G)
    card     13 to 19 digits (groups allowed), a card network's first digit, valid Luhn sum

A number inside a longer run of digits is none of these (a 12-digit slice of a card is not an
Aadhaar). What matched is reported by kind only: a log line or /evolution must not leak it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

__all__ = ["find_pii", "message_texts"]

# Not a piece of a longer number, a decimal, a hash or an identifier (`v2`, `a3f4...`, UUIDs).
_NOT_AFTER_DIGIT = r"(?<![\w.])(?<!\d[ -])"
_NOT_BEFORE_DIGIT = r"(?![ -]?\d|\.\d|\w)"
# `user@host:/path` is an ssh/rsync destination, not a mailbox.
_EMAIL = re.compile(
    r"(?<![\w.%+-])([\w.%+-]+)@((?:[A-Za-z0-9-]+\.)+([A-Za-z]{2,24}))(?![\w-]|\.\w|:\S)"
)
_RESERVED = re.compile(r"(?:^|\.)(?:example\.(?:com|net|org)|example|test|invalid|localhost)$")
_NOT_A_TLD = frozenset(("png", "jpg", "jpeg", "gif", "svg", "webp", "pdf", "py", "js", "md"))
_NOT_A_PERSON = frozenset(("git", "noreply", "no-reply"))
_PHONE = re.compile(
    rf"(?<!\+){_NOT_AFTER_DIGIT}(?:"
    r"(?:\+91[ -]?|0)?[6-9]\d{4}[ -]?\d{5}"  # Indian mobile
    r"|\+[1-9][\d ().-]{6,20}\d"  # +<country> ...
    rf"){_NOT_BEFORE_DIGIT}"
)
_AADHAAR = re.compile(rf"{_NOT_AFTER_DIGIT}[2-9]\d{{3}}([ -]?)\d{{4}}\1\d{{4}}{_NOT_BEFORE_DIGIT}")
_FOUR_DIGITS = re.compile(r"\d{4}")  # every kind but email has four digits in a row
_PAN = re.compile(r"\b[A-Z]{3}[PCHFATBLJG][A-Z]\d{4}[A-Z]\b")
_CARD = re.compile(rf"{_NOT_AFTER_DIGIT}[234568](?:[ -]?\d){{12,18}}{_NOT_BEFORE_DIGIT}")

# Verhoeff's dihedral-group tables: the Aadhaar check digit (UIDAI).
_D = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 2, 3, 4, 0, 6, 7, 8, 9, 5],
    [2, 3, 4, 0, 1, 7, 8, 9, 5, 6], [3, 4, 0, 1, 2, 8, 9, 5, 6, 7],
    [4, 0, 1, 2, 3, 9, 5, 6, 7, 8], [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
    [6, 5, 9, 8, 7, 1, 0, 4, 3, 2], [7, 6, 5, 9, 8, 2, 1, 0, 4, 3],
    [8, 7, 6, 5, 9, 3, 2, 1, 0, 4], [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
]  # fmt: skip
_P = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 5, 7, 6, 2, 8, 3, 0, 9, 4],
    [5, 8, 0, 3, 7, 9, 6, 1, 4, 2], [8, 9, 1, 6, 0, 4, 3, 5, 2, 7],
    [9, 4, 5, 3, 1, 2, 6, 8, 7, 0], [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
    [2, 7, 9, 3, 8, 0, 6, 4, 1, 5], [7, 0, 4, 6, 9, 1, 3, 2, 5, 8],
]  # fmt: skip


def _digits(text: str) -> str:
    return "".join(c for c in text if c.isdigit())


def verhoeff_ok(number: str) -> bool:
    check = 0
    for i, digit in enumerate(reversed(number)):
        check = _D[check][_P[i % 8][int(digit)]]
    return check == 0


def luhn_ok(number: str) -> bool:
    total = 0
    for i, digit in enumerate(reversed(number)):
        d = int(digit) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


def _email(text: str) -> bool:
    for match in _EMAIL.finditer(text):
        local, domain, tld = match.group(1), match.group(2).lower(), match.group(3).lower()
        if local.lower() in _NOT_A_PERSON or tld in _NOT_A_TLD or _RESERVED.search(domain):
            continue
        return True
    return False


def _phone(text: str) -> bool:
    return any(8 <= len(_digits(m.group())) <= 15 for m in _PHONE.finditer(text))


def _aadhaar(text: str) -> bool:
    return any(verhoeff_ok(_digits(m.group())) for m in _AADHAAR.finditer(text))


def _pan(text: str) -> bool:
    return _PAN.search(text) is not None


def _card(text: str) -> bool:
    return any(luhn_ok(_digits(m.group())) for m in _CARD.finditer(text))


_CHECKS = {"email": _email, "phone": _phone, "aadhaar": _aadhaar, "pan": _pan, "card": _card}


def find_pii(texts: Iterable[str], kinds: Sequence[str]) -> str | None:
    """The first kind of `kinds` (in that order) found in any of `texts`, else None."""
    texts = [t for t in texts if t]
    numbered = [t for t in texts if _FOUR_DIGITS.search(t)]  # what the other kinds need
    for kind in kinds:
        check = _CHECKS[kind]
        if any(check(t) for t in ([t for t in texts if "@" in t] if kind == "email" else numbered)):
            return kind
    return None


def message_texts(messages: Sequence[Mapping[str, Any]]) -> Iterator[str]:
    """Every string a request sends upstream as conversation: each message's content (text
    parts of a list), and the arguments of the tool calls an assistant message carries."""
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            yield content
        elif isinstance(content, list):
            for part in content:
                if isinstance(part, Mapping) and isinstance(part.get("text"), str):
                    yield part["text"]
        for call in message.get("tool_calls") or ():
            function = call.get("function") if isinstance(call, Mapping) else None
            if isinstance(function, Mapping) and isinstance(function.get("arguments"), str):
                yield function["arguments"]
