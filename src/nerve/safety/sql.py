"""SQL rules: each statement judged by its verb, its target and its predicate.

A regular-expression tokenizer (strings, quoted identifiers, comments, dollar quotes) splits the
text into statements and finds each one's verb and top-level clauses; comments become spaces, so
`DROP/**/TABLE` is `DROP TABLE`, and MySQL's executable `/*! ... */` comments are read as code.
WHERE predicates are parsed with sqlglot and evaluated, so `WHERE 1=1`, `WHERE 'a'='a' OR x`
and `WHERE TRUE` count as no WHERE at all. Tokenizing with sqlglot itself costs ~3 ms for 3 KB;
this costs a tenth of that, and sqlglot only ever sees a predicate. Statements are judged in
order and judging stops at the first high or critical one; keyword searches run once over a
lower-cased copy with strings and comments blanked.
"""

from __future__ import annotations

import logging
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sqlglot
from sqlglot import exp

from nerve.safety.normalize import normalize
from nerve.safety.scope import DEFAULT_SCOPE, Scope
from nerve.safety.verdict import LOW, Finding, RiskLevel, higher, wordset

__all__ = ["analyze_sql", "check_sql"]

# sqlglot logs unsupported syntax as warnings on stderr; a safety check must stay quiet.
logging.getLogger("sqlglot").setLevel(logging.CRITICAL)

# Keywords that can make SQL dangerous, searched for in lower-cased text: a case-sensitive
# pattern lets the regex engine skip ahead on each word's first letter, IGNORECASE does not.
_PREFILTER = re.compile(
    r"drop|truncate|delete|update|alter|grant|exec|prepare|shutdown|insert|replace|merge|"
    r"xp_cmdshell|outfile|dumpfile|load_file|program|/\*!"
)
_TOKEN = re.compile(
    r"""(?P<ws>\s+)
    |(?P<comment>--[^\n]*|\#[^\n]*|/\*.*?(?:\*/|\Z))
    |(?P<str>[NnEeBbXx]?'(?:[^'\\]|\\.|'')*(?:'|\Z))
    |(?P<dollar>\$(?P<tag>[A-Za-z_]\w*)?\$.*?(?:\$(?P=tag)\$|\Z))
    |(?P<ident>"(?:[^"]|"")*(?:"|\Z)|`[^`]*(?:`|\Z)|\[[^\]\n]*\])
    |(?P<word>[A-Za-z_@][\w$@]*)
    |(?P<num>\d+(?:\.\d+)?)
    |(?P<punct>\*\.\*|[;(),.=*]|<>|!=|<=|>=|[<>+\-/%|&^~!:?{}]+)""",
    re.X | re.S,
)
_EXEC_COMMENT = re.compile(r"/\*!\d*(.*?)\*/", re.S)
_STARTS = wordset(
    "SELECT INSERT UPDATE DELETE MERGE REPLACE UPSERT WITH CREATE DROP ALTER TRUNCATE GRANT "
    "REVOKE SET SHOW DESCRIBE DESC EXPLAIN USE BEGIN COMMIT ROLLBACK START SAVEPOINT RELEASE "
    "CALL EXEC EXECUTE PREPARE DEALLOCATE DECLARE LOCK UNLOCK ANALYZE VACUUM OPTIMIZE REINDEX "
    "CLUSTER COPY LOAD VALUES TABLE COMMENT KILL SHUTDOWN RENAME PRAGMA ATTACH DETACH CACHE "
    "UNCACHE REFRESH MSCK FROM SUMMARIZE PIVOT UNPIVOT IF WHILE RETURN PRINT GO DO LISTEN "
    "NOTIFY REASSIGN IMPORT EXPORT PUT GET LIST UNDROP FLUSH RESET HANDLER CHECKPOINT"
)
_WRITES = wordset(
    "INSERT UPDATE DELETE DROP TRUNCATE ALTER GRANT CREATE REPLACE MERGE EXEC EXECUTE SHUTDOWN"
)
_MAIN_VERBS = frozenset({"SELECT", "INSERT", "UPDATE", "DELETE", "MERGE", "REPLACE", "UPSERT"})
_DROP_HARMLESS = frozenset({"DEFAULT", "NOT", "NULL", "EXPRESSION", "IDENTITY", "STORED"})
_DROP_STRUCTURE = frozenset({"CONSTRAINT", "INDEX", "KEY", "PRIMARY", "FOREIGN", "CHECK", "UNIQUE"})
_CLAUSE_END = frozenset({"ORDER", "LIMIT", "RETURNING", "GROUP", "OPTION", "OFFSET", "OUTPUT"})


@dataclass(slots=True)
class _Tok:
    kind: str  # word, str, ident, num, punct
    text: str  # upper-cased for words
    depth: int
    start: int
    end: int


def _tokenize(text: str) -> list[list[_Tok]]:
    statements: list[list[_Tok]] = [[]]
    depth, pos, n = 0, 0, len(text)
    while pos < n:
        m = _TOKEN.match(text, pos)
        if m is None:
            pos += 1
            continue
        kind = m.lastgroup or ""
        pos = m.end()
        if kind in ("ws", "comment"):
            continue
        value = m.group()
        if value == ";":
            statements.append([])
            depth = 0
            continue
        if value == ")":
            depth = max(0, depth - 1)
        word = value.upper() if kind == "word" else value
        statements[-1].append(_Tok(kind, word, depth, m.start(), m.end()))
        if value == "(":
            depth += 1
    return [s for s in statements if s]


def _words(stmt: list[_Tok], depth: int = 0) -> list[tuple[int, str]]:
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


def _truth(e: exp.Expr) -> bool | None:
    """True/False when the predicate does not depend on the row; None when it does."""
    if isinstance(e, exp.Paren):
        return _truth(e.this)
    if isinstance(e, exp.Or):
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


def _always_true(predicate: str) -> bool:
    try:
        return _truth(sqlglot.parse_one(predicate)) is True
    except Exception:  # sqlglot raises several error types on odd dialects: fall back
        return bool(_TAUTOLOGY.search(predicate.strip()))


def _where(stmt: list[_Tok], text: str, after: int, verb: str) -> Finding:
    """DELETE/UPDATE: no top-level WHERE after the verb, or one that is always true."""
    words = [(i, w) for i, w in _words(stmt) if i > after]
    start = next((i for i, w in words if w == "WHERE"), None)
    if start is None:
        return Finding("high", f"{verb} without WHERE changes every row")
    end = next((i for i, w in words if i > start and w in _CLAUSE_END), len(stmt))
    if end <= start + 1:
        return Finding("high", f"{verb} with an empty WHERE changes every row")
    predicate = text[stmt[start + 1].start : stmt[end - 1].end]
    if _always_true(predicate):
        return Finding("high", f"{verb} with an always-true WHERE ({predicate.strip()[:40]})")
    return LOW


def _statement(stmt: list[_Tok], text: str, injected: bool) -> Finding:
    words = _words(stmt)
    if not words:
        return LOW
    first_i, first = words[0]
    if injected and any(w in _WRITES for _, w in words):
        verb = next(w for _, w in words if w in _WRITES)
        return Finding("high", f"{verb} statement injected after a closed string literal")
    if first == "WITH":
        first_i, first = next(((i, w) for i, w in words if w in _MAIN_VERBS), (first_i, first))
    names = [w for _, w in words]
    rest = names[names.index(first) + 1 :] if first in names else []
    if first == "DROP":
        obj = next(
            (
                w
                for w in rest
                if w not in ("TEMPORARY", "TEMP", "MATERIALIZED", "EXTERNAL", "IF", "EXISTS")
            ),
            "object",
        )
        level: RiskLevel = "critical" if obj in ("DATABASE", "SCHEMA") else "high"
        return Finding(level, f"DROP {obj} destroys it and its data")
    if first == "TRUNCATE":
        return Finding("high", "TRUNCATE deletes every row")
    if first in ("DELETE", "UPDATE"):
        return _where(stmt, text, first_i, first)
    if first == "ALTER":
        return _alter(stmt, text, words)
    if first == "GRANT" and "ALL" in rest[:2]:
        if any(t.text == "*.*" for t in stmt):
            return Finding("high", "GRANT ALL on every database")
        return Finding("medium", "GRANT ALL privileges")
    if first in ("EXEC", "EXECUTE"):
        return _exec(stmt)
    if first == "PREPARE" and "FROM" in rest:
        source = stmt[next(i for i, w in words if w == "FROM") + 1 :]
        if len(source) == 1 and source[0].kind == "str":
            return check_sql(source[0].text[1:-1].replace("''", "'"))
        return Finding("high", "PREPARE of a statement built at run time (dynamic SQL)")
    if first == "SHUTDOWN":
        return Finding("critical", "SHUTDOWN stops the database server")
    if first == "COPY" and "PROGRAM" in rest:
        return Finding("high", "COPY ... PROGRAM runs a shell command on the server")
    if first == "MERGE" and "DELETE" in rest:
        return Finding("medium", "MERGE deletes matching rows")
    if "OUTFILE" in rest or "DUMPFILE" in rest or "LOAD_FILE" in rest:
        return Finding("medium", "reads or writes files on the database server")
    return LOW


def _alter(stmt: list[_Tok], text: str, words: list[tuple[int, str]]) -> Finding:
    best = LOW
    for pos, (i, w) in enumerate(words):
        if w == "DELETE" and words[pos - 1][1] != "ON":  # not ON DELETE CASCADE
            return _where(stmt, text, i, "ALTER ... DELETE")
        if w != "DROP":
            continue
        nxt = [x for _, x in words[pos + 1 : pos + 4] if x not in ("IF", "EXISTS")]
        target = nxt[0] if nxt else (stmt[i + 1].text if i + 1 < len(stmt) else "")
        if target in _DROP_HARMLESS:
            continue
        if target in _DROP_STRUCTURE:
            best = higher(best, Finding("medium", f"ALTER ... DROP {target} removes a constraint"))
        else:
            what = target if target in ("COLUMN", "PARTITION") else "COLUMN"
            return Finding("high", f"ALTER ... DROP {what} deletes its data")
    return best


def _exec(stmt: list[_Tok]) -> Finding:
    nxt = stmt[1] if len(stmt) > 1 else None
    if nxt is None:
        return LOW
    name = nxt.text.upper()
    if "XP_CMDSHELL" in name:
        return Finding("high", "xp_cmdshell runs operating-system commands")
    if (
        nxt.kind == "str"
        or nxt.text in ("(", "IMMEDIATE")
        or name.startswith("@")
        or name in ("SP_EXECUTESQL", "SYS.SP_EXECUTESQL")
    ):
        return Finding("high", "EXEC of a string built at run time (dynamic SQL)")
    return Finding("medium", f"EXEC runs the stored procedure {nxt.text}, whose effect is unseen")


def analyze_sql(text: str, scope: Scope = DEFAULT_SCOPE) -> tuple[Finding, bool]:
    """The first blocking statement's finding (else the riskiest), and whether the text read
    as SQL at all. Statements are judged in order; judging stops at a high or critical one."""
    text = normalize(text)
    if "/*!" in text:
        text = _EXEC_COMMENT.sub(r" \1 ", text)
    if not _PREFILTER.search(text.lower()):
        return LOW, True
    # An odd number of quotes: a fragment meant to be pasted inside a string literal (SQL
    # injection). Close the string first, then judge what follows it.
    quote = next((q for q in ("'", '"') if (text.count(q) - text.count("\\" + q)) % 2), None)
    injected = quote is not None
    source = quote + text if quote else text
    danger = _PREFILTER if injected else _DANGER
    blanked, lowered, spans = _split(source)
    best, is_sql = LOW, False
    for n, (start, end) in enumerate(spans):  # each statement judged alone
        head = _HEAD.search(blanked, start, end)
        verb = head.group().upper() if head else ""
        is_sql = is_sql or verb in _STARTS or (injected and n == 0)
        if not danger.search(lowered, start, end):
            continue  # nothing dangerous outside its strings and comments
        chunk = source[start:end]
        if verb in ("DELETE", "UPDATE") and not injected:
            after = head.end() - start if head else 0
            best = higher(best, _fast_where(chunk, lowered[start:end], after, verb))
        else:
            for stmt in _tokenize(chunk):
                best = higher(best, _statement(stmt, chunk, injected))
                if best.blocks:
                    break
        if best.blocks:
            break
    return best, is_sql


_COARSE = re.compile(
    r"""(?P<skip>--[^\n]*|\#[^\n]*|/\*.*?(?:\*/|\Z)|[NnEeBbXx]?'(?:[^'\\]|\\.|'')*(?:'|\Z)
    |\$(?P<tag>[A-Za-z_]\w*)?\$.*?(?:\$(?P=tag)\$|\Z)|"(?:[^"]|"")*(?:"|\Z)|`[^`]*(?:`|\Z))
    |(?P<semi>;)|(?P<code>[^'"`;\#$/\-]+|.)""",
    re.X | re.S,
)
_HEAD = re.compile(r"[A-Za-z_]\w*")
_DANGER = re.compile(
    r"drop|truncate|delete|update|alter|grant|exec|prepare|shutdown|xp_cmdshell|outfile|"
    r"dumpfile|load_file|program"
)
_CLAUSES = re.compile(r"[()]|\b(?:where|order|limit|returning|group|option|offset|output)\b")


def _fast_where(chunk: str, blanked: str, after: int, verb: str) -> Finding:
    """DELETE/UPDATE without tokenizing: top-level WHERE found on the blanked, lower-cased text."""
    depth, where, end = 0, -1, len(chunk)
    for m in _CLAUSES.finditer(blanked, after):
        word = m.group()
        if word == "(":
            depth += 1
        elif word == ")":
            depth = max(0, depth - 1)
        elif depth == 0 and where < 0 and word.upper() == "WHERE":
            where = m.end()
        elif depth == 0 and where >= 0 and word.upper() in _CLAUSE_END:
            end = m.start()
            break
    if where < 0:
        return Finding("high", f"{verb} without WHERE changes every row")
    predicate = chunk[where:end].strip()
    if not predicate or _always_true(predicate):
        return Finding("high", f"{verb} with an always-true WHERE ({predicate[:40] or 'empty'})")
    return LOW


def _split(source: str) -> tuple[str, str, list[tuple[int, int]]]:
    """The text with strings and comments blanked (same length, so offsets stay valid), its
    lower-cased copy, and each statement's (start, end), in one pass.

    Long runs of plain code are one match each, so a 3 KB statement costs a few dozen steps;
    only statements with a dangerous keyword outside strings and comments are tokenized.
    """
    spans: list[tuple[int, int]] = []
    start, parts = 0, list[str]()
    for m in _COARSE.finditer(source):
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
        [(a, b) for a, b in spans if not blanked[a:b].isspace() and a < b],
    )


def check_sql(text: str, scope: Scope = DEFAULT_SCOPE) -> Finding:
    return analyze_sql(text, scope)[0]
