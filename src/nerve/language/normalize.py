"""Keyword normalization, not translation (SPEC LG-3).

Only the domain-critical words of the lexicons (`keyword` entries: `pannu` -> do, `bhejo` ->
send, `maadi` -> do, `ayakku` -> send, `koro` -> do...) are rewritten to their English keyword;
every other character of the text, spacing and punctuation included, is kept as it was. A word is
rewritten only when every considered language that lists it agrees on its keyword: `din` is
"give" in Bengali but "day" in Hindi, so it stays `din` unless Bengali is the only candidate.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from nerve.language.lexicon import load
from nerve.language.tokens import ELONGATED, LANGS, TOKEN, lookup_forms

_SPLIT = re.compile(f"({TOKEN.pattern})")


def normalize(text: str, languages: Sequence[str] | None = None) -> str:
    """Rewrite the keywords of `languages` (all languages when None) in `text` to English."""
    considered = LANGS if languages is None else tuple(g for g in LANGS if g in set(languages))
    table = _table(considered)
    if not table or not text:
        return text
    parts = _SPLIT.split(text)  # text, token, text, token, ..., text
    stretched = ELONGATED.search(text) is not None
    for i in range(1, len(parts), 2):
        token = parts[i]
        english = table.get(token.lower())
        if english is None and (stretched or not token.isascii()):
            english = next((table[f] for f in lookup_forms(token) if f in table), None)
        if english is not None:
            parts[i] = _cased(english, token)
    return "".join(parts)


@functools.cache
def _table(languages: tuple[str, ...]) -> dict[str, str]:
    """word -> English keyword, for the words all of `languages` that list them agree on."""
    lexicon = load()
    table: dict[str, str] = {}
    vetoed: set[str] = set()
    for lang in languages:
        for word, english in lexicon.by_lang[lang].words.items():
            if english is None or table.get(word, english) != english:
                vetoed.add(word)
            else:
                table[word] = english
    for word in vetoed:
        table.pop(word, None)
    return table


def _cased(english: str, token: str) -> str:
    if len(token) > 1 and token.isupper():
        return english.upper()
    if token[:1].isupper():
        return english[:1].upper() + english[1:]
    return english
