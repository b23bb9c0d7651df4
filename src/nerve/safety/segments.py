"""Split a long shell script into its top-level lines, so each can be skipped or judged alone.

A newline ends a command only outside quotes, `$( )`, `( )`, backticks and here-document bodies,
and not after a backslash. `split` follows exactly those with two small scanners (one for plain
shell text, one inside double quotes), each match a whole run, quoted string or operator, so a
3 KB script costs a few hundred regex steps. Here-document bodies stay with the line that opens
them; an unterminated quote or substitution runs to the end of the text, as in the lexer.
"""

from __future__ import annotations

import re

__all__ = ["split"]

# Outside double quotes: plain runs, whole '...', $'...', `...` and ${...}, escapes, openers.
_PLAIN = re.compile(
    r"""[^'"\\`$()<\n#]+|'[^']*'?|\$'(?:[^'\\]|\\.)*'?|\\.?|`(?:[^`\\]|\\.)*`?|\$\{[^}]*\}?
    |<<<|<<-?[ \t]*(?P<delim>'[^'\n]*'|"[^"\n]*"|\\?[^\s;&|<>()]+)?|\$\(|[()"\n#$<]""",
    re.S | re.X,
)
# Inside double quotes only these matter: the closing quote, escapes, $( ), `...`, ${...}.
_QUOTED = re.compile(r"""[^"\\`$]+|\\.?|`(?:[^`\\]|\\.)*`?|\$\{[^}]*\}?|\$\(|["$]""", re.S)
_WORD_START = frozenset(" \t\n;&|()")
# A line that surely ends at its newline: whole quoted strings (inside double quotes, no ` $( or
# ${), escaped characters, ( ) $( ) ${ } and `...` that close on the line with no quote or
# nesting inside; no <<. One C-level fullmatch (possessive, so a failing line costs no
# backtracking); anything else, a quote in a comment too, is scanned token by token.
_CLOSED = re.compile(
    r"""(?:[^'"\\`(<$\n]++|'[^'\n]*+'|"(?:[^"\\`$\n]++|\\[^\n]|\$(?![({]))*+"|\\[^\n]
    |\$?\([^()'"\\`\n]*+\)|\$\{[^{}'"\\`\n]*+\}|`[^`'"\\\n]*+`|\$(?![({'])|<(?!<))*+""",
    re.X,
)


def split(text: str) -> list[str]:
    """The top-level lines of `text`, in order (multi-line constructs kept whole)."""
    segments: list[str] = []
    pos, n = 0, len(text)
    while pos <= n:
        nl = text.find("\n", pos)
        nl = n if nl < 0 else nl
        if _CLOSED.fullmatch(text, pos, nl) is None:
            nl = _scan(text, pos)
        segments.append(text[pos:nl])
        pos = nl + 1
    return segments


def _scan(text: str, pos: int) -> int:
    """From the start of a line at top level: where the command that starts there ends (the
    position of the newline that ends it, past any here-document bodies, or len(text))."""
    stack: list[str] = []  # "(" for $( ) and ( ), '"' for double quotes
    heredocs: list[str] = []
    n = len(text)
    while pos < n:
        m = (_QUOTED if stack and stack[-1] == '"' else _PLAIN).match(text, pos)
        if m is None:  # cannot happen: every character starts some alternative
            break
        tok = m.group()
        pos = m.end()
        first = tok[0]
        if first == '"':
            if stack and stack[-1] == '"':
                stack.pop()
            else:
                stack.append('"')
        elif tok == "$(" or tok == "(":
            stack.append("(")
        elif tok == ")":
            if stack and stack[-1] == "(":
                stack.pop()
        elif first == "#" and (m.start() == 0 or text[m.start() - 1] in _WORD_START):
            nl = text.find("\n", pos)
            pos = n if nl < 0 else nl  # a comment: quotes in it mean nothing
        elif tok.startswith("<<") and tok != "<<<" and m.group("delim"):
            heredocs.append(m.group("delim").strip("'\"").removeprefix("\\"))
        elif tok == "\n":
            if heredocs:
                pos = _skip_bodies(text, pos, heredocs)
                heredocs = []
            if not stack:
                return min(pos - 1, n)
    return n


def _skip_bodies(text: str, pos: int, delims: list[str]) -> int:
    """Past the bodies of the pending here-documents (each ends at a line equal to its delimiter,
    leading tabs allowed for <<-); returns the position after the last delimiter's newline."""
    for delim in delims:
        while pos < len(text):
            nl = text.find("\n", pos)
            end = len(text) if nl < 0 else nl
            line = text[pos:end]
            pos = end + 1
            if line.lstrip("\t") == delim:
                break
    return pos
