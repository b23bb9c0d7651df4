"""WHERE clauses: does a DELETE or UPDATE touch every row?

Predicates are parsed with sqlglot and evaluated, so `WHERE 1=1`, `WHERE 'a'='a' OR x` and
`WHERE TRUE` count as no WHERE at all. sqlglot only ever sees a predicate: tokenizing whole
statements with it would cost ten times more.
"""

from __future__ import annotations

import logging
import operator
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import sqlglot
from sqlglot import exp

from nerve.safety.sql_lex import Tok
from nerve.safety.verdict import LOW, Finding

__all__ = ["fast_where", "where", "words"]

# sqlglot logs unsupported syntax as warnings on stderr; a safety check must stay quiet.
logging.getLogger("sqlglot").setLevel(logging.CRITICAL)

CLAUSE_END = frozenset({"ORDER", "LIMIT", "RETURNING", "GROUP", "OPTION", "OFFSET", "OUTPUT"})


def words(stmt: list[Tok], depth: int = 0) -> list[tuple[int, str]]:
    return [(i, t.text) for i, t in enumerate(stmt) if t.kind == "word" and t.depth == depth]


def _literal(e: exp.Expr) -> object:
    if isinstance(e, exp.Paren):
        return _literal(e.this)
    if isinstance(e, exp.Boolean):
        return bool(e.this)
    if isinstance(e, exp.Literal):
        if e.is_string:
            return str(e.this)
        try:
            return float(e.this)
        except ValueError:
            return None
    if isinstance(e, exp.Neg):
        inner = _literal(e.this)
        return -inner if isinstance(inner, float) else None
    return None


_COMPARE: dict[type[exp.Expr], Callable[[Any, Any], bool]] = {
    exp.EQ: operator.eq,
    exp.NullSafeEQ: operator.eq,
    exp.NEQ: operator.ne,
    exp.GT: operator.gt,
    exp.GTE: operator.ge,
    exp.LT: operator.lt,
    exp.LTE: operator.le,
}
_REFLEXIVE = (exp.EQ, exp.GTE, exp.LTE, exp.NullSafeEQ)  # x = x holds for every row


def _bare(e: exp.Expr) -> exp.Expr:
    return _bare(e.this) if isinstance(e, exp.Paren) else e


def _excluded_middle(a: exp.Expr, b: exp.Expr) -> bool:
    """`x IS NULL OR x IS NOT NULL`: an IS test is never NULL, so it or its negation holds
    (`x = 1 OR NOT x = 1` is NULL, so false, when x is NULL: not a tautology)."""
    a, b = _bare(a), _bare(b)
    return isinstance(b, exp.Not) and isinstance(a, exp.Is) and _bare(b.this) == a


def _truth(e: exp.Expr) -> bool | None:
    """True/False when the predicate does not depend on the row; None when it does."""
    if isinstance(e, exp.Paren):
        return _truth(e.this)
    if isinstance(e, exp.Or):
        if _excluded_middle(e.left, e.right) or _excluded_middle(e.right, e.left):
            return True
        left, right = _truth(e.left), _truth(e.right)
        return True if True in (left, right) else (False if left is right is False else None)
    if isinstance(e, exp.And):
        left, right = _truth(e.left), _truth(e.right)
        return False if False in (left, right) else (True if left is right is True else None)
    if isinstance(e, exp.Not):
        inner = _truth(e.this)
        return None if inner is None else not inner
    value = _literal(e)
    if value is not None:
        return bool(value) if not isinstance(value, str) else None
    compare = _COMPARE.get(type(e))
    if compare is not None and isinstance(e, exp.Binary):
        a, b = _literal(e.left), _literal(e.right)
        if a is not None and b is not None and type(a) is type(b):
            try:
                return bool(compare(a, b))
            except TypeError:
                return None
        if isinstance(e, _REFLEXIVE) and e.left == e.right:
            return True
    if isinstance(e, exp.Like) and _literal(e.expression) == "%":
        return True
    return None


_TAUTOLOGY = re.compile(
    r"(?:^|\bOR\s+)(?:TRUE|1|(?P<a>'[^']*'|\d+|\w+)\s*(?:=|>=|<=|LIKE)\s*(?P=a))(?:\s|$|\))",
    re.IGNORECASE,
)


@lru_cache(maxsize=512)  # dialect "any" asks once per reading
def _always_true(predicate: str) -> bool:
    try:
        return _truth(sqlglot.parse_one(predicate)) is True
    except Exception:  # sqlglot raises several error types on odd dialects: fall back
        return bool(_TAUTOLOGY.search(predicate.strip()))


def _every_row(verb: str, why: str) -> Finding:
    return Finding("high", f"{verb} {why} changes every row", "destructive")


def where(stmt: list[Tok], text: str, after: int, verb: str) -> Finding:
    """DELETE/UPDATE: no top-level WHERE after the verb, or one that is always true."""
    found = [(i, w) for i, w in words(stmt) if i > after]
    start = next((i for i, w in found if w == "WHERE"), None)
    if start is None:
        return _every_row(verb, "without WHERE")
    end = next((i for i, w in found if i > start and w in CLAUSE_END), len(stmt))
    if end <= start + 1:
        return _every_row(verb, "with an empty WHERE")
    predicate = text[stmt[start + 1].start : stmt[end - 1].end]
    if _always_true(predicate):
        return _every_row(verb, f"with an always-true WHERE ({predicate.strip()[:40]})")
    return LOW


_CLAUSES = re.compile(r"[()]|\b(?:where|order|limit|returning|group|option|offset|output)\b")


def fast_where(chunk: str, blanked: str, after: int, verb: str) -> Finding:
    """DELETE/UPDATE without tokenizing: top-level WHERE found on the blanked, lower-cased text."""
    depth, start, end = 0, -1, len(chunk)
    for m in _CLAUSES.finditer(blanked, after):
        word = m.group()
        if word == "(":
            depth += 1
        elif word == ")":
            depth = max(0, depth - 1)
        elif depth == 0 and start < 0 and word == "where":
            start = m.end()
        elif depth == 0 and start >= 0 and word.upper() in CLAUSE_END:
            end = m.start()
            break
    if start < 0:
        return _every_row(verb, "without WHERE")
    predicate = chunk[start:end].strip()
    if not predicate or _always_true(predicate):
        return _every_row(verb, f"with an always-true WHERE ({predicate[:40] or 'empty'})")
    return LOW
