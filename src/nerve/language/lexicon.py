"""The word lists behind detection and normalization (SPEC LG-1, LG-3): one file per language.

`lexicons/<lang>.tsv` holds one entry a line, tab-separated, `word<TAB>kind[<TAB>english]`:

- `word`: the word identifies the language (a third column is only a gloss for readers);
- `keyword`: it also identifies the language, and normalization rewrites it to `english`;
- `function`: a function word (article, pronoun, preposition, auxiliary): it identifies the
  language, and English ones tell a sentence whose grammar is English from an Indic sentence
  that borrows English nouns and verbs;
- `suffix`: an ending (written `-nga`) typical of the language, evidence for unlisted words.

Blank lines and `#` comments are skipped. To add a word, add a line; to add a language, add a
file and its code to `LANGS` in `tokens.py`. The files are read once, on first use.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from importlib import resources

from nerve.language.tokens import LANGS, fold

KINDS = ("word", "keyword", "function", "suffix")


class LexiconError(ValueError):
    """A lexicon file that does not follow the format; names the file and line."""


@dataclass(slots=True)
class LanguageLexicon:
    """One language's entries: word -> English keyword (None for identification-only words)."""

    lang: str
    words: dict[str, str | None] = field(default_factory=dict)
    function: frozenset[str] = frozenset()
    suffixes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Lexicon:
    """All languages' entries, indexed for lookup."""

    by_lang: dict[str, LanguageLexicon]
    langs_of: dict[str, frozenset[str]]  # word -> every language that lists it


def parse(text: str, lang: str, source: str = "<text>") -> LanguageLexicon:
    """Parse one lexicon file's text; raise LexiconError naming `source` and the line."""
    entries: dict[str, str | None] = {}
    suffixes: list[str] = []
    function: set[str] = set()
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        cols = [col.strip() for col in line.split("\t")]
        where = f"{source}:{number}"
        if len(cols) not in (2, 3) or not cols[0]:
            raise LexiconError(f"{where}: expected word<TAB>kind[<TAB>english], got {raw!r}")
        word, kind = fold(cols[0]), cols[1]
        english = cols[2] if len(cols) == 3 else ""
        if kind not in KINDS:
            raise LexiconError(f"{where}: kind must be one of {', '.join(KINDS)}, got {kind!r}")
        if " " in word:
            raise LexiconError(f"{where}: one word per line, got {word!r}")
        if kind == "suffix":
            if not word.startswith("-") or len(word) < 2:
                raise LexiconError(f"{where}: a suffix is written with a leading '-': {word!r}")
            suffixes.append(word[1:])
        elif kind == "keyword":
            if not english:
                raise LexiconError(f"{where}: keyword {word!r} needs its English keyword")
            entries[word] = english.lower()
        else:
            entries.setdefault(word, None)
            if kind == "function":
                function.add(word)
    # Longest first, so the most specific ending is the one that counts.
    ordered = tuple(sorted(set(suffixes), key=len, reverse=True))
    return LanguageLexicon(lang, entries, frozenset(function), ordered)


@functools.cache
def load() -> Lexicon:
    """The packaged lexicons of every language in LANGS."""
    root = resources.files("nerve.language") / "lexicons"
    by_lang: dict[str, LanguageLexicon] = {}
    for lang in LANGS:
        path = root / f"{lang}.tsv"
        by_lang[lang] = parse(path.read_text(encoding="utf-8"), lang, f"lexicons/{lang}.tsv")
    owners: dict[str, set[str]] = {}
    for lang, lex in by_lang.items():
        for word in lex.words:
            owners.setdefault(word, set()).add(lang)
    langs_of = {word: frozenset(langs) for word, langs in owners.items()}
    return Lexicon(by_lang=by_lang, langs_of=langs_of)
