"""Where a statement's real work is: past its CTEs, inside EXPLAIN ANALYZE.

`WITH a AS (...), b AS (...) DELETE FROM t` is a DELETE; in PostgreSQL a CTE body may itself be
a DELETE, UPDATE or INSERT that runs (`WITH d AS (DELETE FROM t RETURNING *) SELECT ...`).
`EXPLAIN ANALYZE stmt` (and MariaDB's `ANALYZE stmt`) runs the statement to time it; a plain
EXPLAIN only plans it. Both the rules and the read-only check judge the parts these find.
"""

from __future__ import annotations

from nerve.safety.sql_lex import Tok
from nerve.safety.verdict import wordset

__all__ = ["EXPLAINED", "explained", "first_word", "with_parts"]

# Statements EXPLAIN accepts (and so may run under ANALYZE).
EXPLAINED = wordset(
    "SELECT INSERT UPDATE DELETE MERGE REPLACE UPSERT WITH VALUES TABLE CREATE EXECUTE DECLARE"
)
_CTE_MAIN = EXPLAINED | wordset("DROP TRUNCATE ALTER EXEC CALL COPY GRANT REVOKE")
_CTE_CLAUSE = wordset("SEARCH CYCLE DEPTH BREADTH FIRST BY SET USING TO DEFAULT")
_OFF = frozenset({"FALSE", "OFF", "0", "NO"})


def first_word(stmt: list[Tok]) -> tuple[int, str]:
    """The statement's verb: its first top-level word, or the first word at all when it opens
    with a parenthesis (`(SELECT 1) UNION (SELECT 2)`)."""
    for i, t in enumerate(stmt):
        if t.kind == "word" and (t.depth == 0 or stmt[0].text == "("):
            return i, t.text
    return -1, ""


def _close(stmt: list[Tok], i: int) -> int:
    depth = stmt[i].depth
    return next((j for j in range(i + 1, len(stmt)) if stmt[j].depth == depth), len(stmt))


def _rebase(tokens: list[Tok], base: int) -> list[Tok]:
    return [Tok(t.kind, t.text, t.depth - base, t.start, t.end) for t in tokens]


def with_parts(stmt: list[Tok], at: int = 0) -> tuple[list[list[Tok]], list[Tok]]:
    """The CTE bodies (each as a statement of its own) and the main statement after them, for
    a statement whose word at `at` is WITH. Text that is not CTE-shaped leaves everything from
    its first top-level statement verb as the main statement."""
    bodies: list[list[Tok]] = []
    n, i = len(stmt), at + 1
    if i < n and stmt[i].text == "RECURSIVE":
        i += 1
    while i < n:
        i += 1  # the CTE's name
        if i < n and stmt[i].text == "(":  # its column list
            i = _close(stmt, i) + 1
        if i >= n or stmt[i].text != "AS":
            break
        i += 1
        while i < n and stmt[i].text in ("NOT", "MATERIALIZED"):
            i += 1
        if i >= n or stmt[i].text != "(":
            break
        j = _close(stmt, i)
        bodies.append(_rebase(stmt[i + 1 : j], stmt[i].depth + 1))
        i = j + 1
        while i < n and stmt[i].text != "," and stmt[i].text not in _CTE_MAIN:
            if stmt[i].text == "(" and stmt[i - 1].text not in _CTE_CLAUSE:
                return bodies, stmt[i:]  # a parenthesised main query
            i += 1  # SEARCH ... SET col / CYCLE ... USING path
        if i >= n or stmt[i].text != ",":
            return bodies, stmt[i:]
        i += 1
    rest = next((k for k in range(i, n) if stmt[k].depth == 0 and stmt[k].text in _CTE_MAIN), n)
    return bodies, stmt[rest:]


def explained(stmt: list[Tok], at: int = 0) -> tuple[bool, list[Tok]]:
    """For EXPLAIN/DESCRIBE at `at`, or MariaDB's ANALYZE: whether the statement runs (ANALYZE
    not switched off in the option list), and the statement explained (empty for `DESC t`)."""
    analyze = stmt[at].text in ("ANALYZE", "ANALYSE")
    for i in range(at + 1, len(stmt)):
        t = stmt[i]
        if t.depth == 0 and t.kind == "word" and t.text in EXPLAINED:
            return analyze, stmt[i:]
        if t.kind == "word" and t.text in ("ANALYZE", "ANALYSE"):
            nxt = stmt[i + 1] if i + 1 < len(stmt) else None
            switched_off = nxt is not None and nxt.depth == t.depth and nxt.text.upper() in _OFF
            analyze = analyze or not switched_off
    return analyze, []
