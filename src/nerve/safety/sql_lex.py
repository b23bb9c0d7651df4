"""How SQL text is read: comments, strings and statements, per dialect.

Dialects disagree on what is code. `--1` is a comment in PostgreSQL, SQLite and T-SQL but two
minus signs in MySQL (which needs whitespace after `--`); `#` starts a comment only in MySQL and
MariaDB; `'\\'` is a complete string in PostgreSQL (standard_conforming_strings) but the start of
one in MySQL; `$tag$ ... $tag$` quotes only in PostgreSQL; `[...]` quotes an identifier in T-SQL
and SQLite; block comments nest in PostgreSQL and T-SQL only; `/*! ... */` runs in MySQL and
MariaDB, `/*M! ... */` in MariaDB only. A `Reading` is one such grammar. Dialect "any" reads
the text every way a database might and the caller keeps the riskiest verdict; when the text
has none of the constructs they disagree on, one reading stands for all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Reading", "Tok", "any_of", "disputed", "readings", "split", "tokenize", "unwrap"]


@dataclass(slots=True)
class Tok:
    kind: str  # word, str, ident, num, punct
    text: str  # upper-cased for words
    depth: int
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Reading:
    name: str
    token: re.Pattern[str]
    coarse: re.Pattern[str]
    exec_comment: re.Pattern[str] | None  # executable comments whose content runs


_BLOCK = r"/\*.*?(?:\*/|\Z)"
_DOLLAR = r"\$(?P<tag>[A-Za-z_]\w*)?\$.*?(?:\$(?P=tag)\$|\Z)"
_BACKTICK = r"`(?:[^`]|``)*(?:`|\Z)"
_DQUOTE = r'"(?:[^"]|"")*(?:"|\Z)'
_PLAIN_STR = r"'(?:[^']|'')*(?:'|\Z)"
_ESC_STR = r"'(?:[^'\\]|\\.|'')*(?:'|\Z)"
_WORD_NUM_PUNCT = r"""
    |(?P<word>[A-Za-z_@][\w$@]*)
    |(?P<num>\d+(?:\.\d+)?)
    |(?P<punct>\*\.\*|[;(),.=*]|<>|!=|<=|>=|[<>+\-/%|&^~!:?{}\#]+)
    |(?P<other>.)"""


def _reading(
    name: str, comment: str, string: str, ident: str, stops: str, exec_comment: str | None = None
) -> Reading:
    # Whitespace is consumed with the token after it: one match per token.
    token = (
        rf"\s*(?:(?P<comment>{comment})|(?P<str>(?:[NnBbXx](?='))?(?:{string}))"
        rf"|(?P<ident>{ident})" + _WORD_NUM_PUNCT + ")?"
    )
    # A run of plain code is one match (a 3 KB statement costs a few dozen steps); it stops
    # at any character that may open a comment, string or quoted name. An E'...' string's E
    # must start a word, so a run never ends on an E or e that could be that prefix.
    run = rf"[^{stops}]*[^{stops}Ee]" if "(?<![\\w$])[Ee]'" in string else rf"[^{stops}]+"
    coarse = rf"(?P<skip>{comment}|{string}|{ident})|(?P<semi>;)|(?P<code>{run}|.)"
    flags = re.X | re.S
    return Reading(
        name,
        re.compile(token, flags),
        re.compile(coarse, flags),
        re.compile(exec_comment, re.S) if exec_comment else None,
    )


def _nested_block(depth: int) -> str:
    """PostgreSQL's block comments nest (`/* a /* b */ still a comment */`): a comment that
    ends where MySQL's would can open a string that hides what PostgreSQL runs. Nesting is
    followed `depth` levels deep; past that a comment ends at its first `*/`."""
    pattern = r"/\*(?:[^*]|\*(?!/))*(?:\*/|\Z)"
    for _ in range(depth):
        pattern = rf"/\*(?:[^*/]|\*(?!/)|/(?!\*)|{pattern})*(?:\*/|\Z)"
    return pattern


_MYSQL_COMMENT = r"--(?=[\s\x00-\x1f]|\Z)[^\n]*|\#[^\n]*|" + _BLOCK
_STD_COMMENT = r"--[^\n]*|" + _BLOCK
_PG_COMMENT = r"--[^\n]*|" + _nested_block(4)
MYSQL = _reading(
    "mysql",
    _MYSQL_COMMENT,
    _ESC_STR + r'|"(?:[^"\\]|\\.|"")*(?:"|\Z)',
    _BACKTICK,
    r"'\"`;\#/\-",
    r"/\*!\d*(.*?)\*/",
)
MARIADB = _reading(
    "mariadb",
    _MYSQL_COMMENT,
    _ESC_STR + r'|"(?:[^"\\]|\\.|"")*(?:"|\Z)',
    _BACKTICK,
    r"'\"`;\#/\-",
    r"/\*[Mm]?!\d*(.*?)\*/",
)
POSTGRES = _reading(
    "postgres",
    _PG_COMMENT,
    r"(?<![\w$])[Ee]" + _ESC_STR + "|" + _PLAIN_STR + "|" + _DOLLAR,
    _DQUOTE + "|" + _BACKTICK,
    r"'\"`;$/\-",
)
STANDARD = _reading(  # SQLite, Oracle
    "standard",
    _STD_COMMENT,
    _PLAIN_STR,
    _DQUOTE + "|" + _BACKTICK + r"|\[[^\]\n]*\]",
    r"'\"`;/\-\[",
)
TSQL = _reading(  # block comments nest, as in PostgreSQL
    "mssql",
    _PG_COMMENT,
    _PLAIN_STR,
    _DQUOTE + "|" + _BACKTICK + r"|\[[^\]\n]*\]",
    r"'\"`;/\-\[",
)
_BY_DIALECT = {
    "mysql": (MYSQL,),
    "mariadb": (MARIADB,),
    "postgres": (POSTGRES,),
    "sqlite": (STANDARD,),
    "mssql": (TSQL,),
    "oracle": (STANDARD,),
}
# What the readings disagree on; MariaDB's reading includes MySQL's (it also runs `/*!`).
# A [bracket] matters only when it holds what would otherwise open a string or comment.
_DISPUTED = re.compile(
    r"\\|\#|--(?![ \t\n\r\f\v])|/\*[Mm]?!|\$(?:[A-Za-z_]\w*)?\$|\[[^\]\n]*['\"`;#/-]"
    r"|/\*(?:[^*]|\*(?!/))*?/\*"
)
_E_STRING = re.compile(r"(?<![\w$])[Ee]'")


def any_of(words: str) -> re.Pattern[str]:
    """A search for any of the lower-case words, grouped by first letter: `re` tries a
    pattern's alternatives one by one at each position, so 40 keywords in one flat
    alternation cost four times what 15 letter groups do on a 3 KB statement."""
    groups: dict[str, list[str]] = {}
    for word in sorted(set(words.split()), key=lambda w: (-len(w), w)):
        groups.setdefault(word[0], []).append(re.escape(word[1:]))
    return re.compile("|".join(f"{re.escape(c)}(?:{'|'.join(g)})" for c, g in groups.items()))


def disputed(text: str) -> bool:
    """Whether the readings may disagree on the text (else any one stands for all)."""
    return _DISPUTED.search(text) is not None


def readings(text: str, dialect: str) -> tuple[Reading, ...]:
    named = _BY_DIALECT.get(dialect)
    if named is not None:
        return named
    found = {m.group()[0] for m in _DISPUTED.finditer(text)}
    if not found:
        return (MARIADB,)
    # MariaDB's reading differs from the rest on \ # -- and /*!, SQLite's and T-SQL's on
    # [brackets]; PostgreSQL's from SQLite's only on $tag$, E'\' and nested comments.
    if "$" in found or "/" in found or ("\\" in found and _E_STRING.search(text)):
        return (MARIADB, POSTGRES, STANDARD)
    return (MARIADB, STANDARD)


def tokenize(text: str, reading: Reading) -> list[list[Tok]]:
    statements: list[list[Tok]] = [[]]
    depth = 0
    for m in reading.token.finditer(text):
        kind = m.lastgroup
        if kind is None or kind == "comment" or kind == "other":
            continue
        value = m.group(kind)
        if value == ";":
            statements.append([])
            depth = 0
            continue
        if value == ")":
            depth = max(0, depth - 1)
        word = value.upper() if kind == "word" else value
        statements[-1].append(Tok(kind, word, depth, m.start(kind), m.end()))
        if value == "(":
            depth += 1
    return [s for s in statements if s]


def split(source: str, reading: Reading) -> tuple[str, str, list[tuple[int, int]]]:
    """The text with strings, quoted names and comments blanked (same length, so offsets stay
    valid), its lower-cased copy, and each statement's (start, end), in one pass."""
    spans: list[tuple[int, int]] = []
    start, parts = 0, list[str]()
    for m in reading.coarse.finditer(source):
        if m.lastgroup == "semi":
            spans.append((start, m.start()))
            start = m.end()
            parts.append(" ")
        elif m.group("skip") is not None:
            parts.append(" " * (m.end() - m.start()))
        else:
            parts.append(m.group())
    spans.append((start, len(source)))
    blanked = "".join(parts)
    return (
        blanked,
        blanked.lower(),
        [(a, b) for a, b in spans if a < b and not blanked[a:b].isspace()],
    )


def unwrap(source: str, reading: Reading) -> str:
    """Executable comments replaced by their content, for the readings that run it."""
    if reading.exec_comment is None or "/*" not in source:
        return source
    return reading.exec_comment.sub(r" \1 ", source)
