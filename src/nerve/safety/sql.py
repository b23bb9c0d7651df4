"""SQL rules: each statement judged by its verb, its target and its predicate.

    analyze_sql(text, scope) -> (Finding, is_sql)      check_sql(text, scope) -> Finding

The text is read as its dialect reads it (sql_lex.py; scope.dialect "any" reads it every way
and keeps the riskiest verdict): comments become spaces, so `DROP/**/TABLE` is `DROP TABLE`,
and executable comments are code where they run. Each statement is judged past its CTEs and
inside EXPLAIN ANALYZE (sql_shape.py): DROP, TRUNCATE, ALTER ... DROP and EXEC (sql_rules.py),
DELETE/UPDATE by their WHERE (sql_predicate.py), reaches past the database (sql_files.py), and
in read-only mode anything that is not a read (sql_read_only.py). Statements are judged in
order, judging stops at the first high or critical one, and only statements with a dangerous
keyword outside their strings and comments are tokenized: tokenizing with sqlglot would cost
~3 ms for 3 KB, this a tenth of that. To add a rule, add it to the module of its concern and
its keyword to _DANGER.
"""

from __future__ import annotations

import re

from nerve.safety.normalize import normalize
from nerve.safety.scope import DEFAULT_SCOPE, Scope
from nerve.safety.sql_files import FILE_WORDS, file_access
from nerve.safety.sql_lex import (
    Reading,
    Tok,
    any_of,
    disputed,
    readings,
    split,
    tokenize,
    unwrap,
)
from nerve.safety.sql_predicate import fast_where, where, words
from nerve.safety.sql_read_only import refusal
from nerve.safety.sql_rules import account, alter, drop, exec_, grant
from nerve.safety.sql_shape import explained, first_word, with_parts
from nerve.safety.verdict import LOW, Category, Finding, higher, wordset

__all__ = ["analyze_sql", "check_sql"]

_DANGER_WORDS = (
    "drop truncate delete update alter grant exec prepare shutdown merge password superuser "
    "dblink query_to_xml " + FILE_WORDS
)
# Keywords that can make SQL dangerous, searched for in lower-cased text: a case-sensitive
# pattern lets the regex engine skip ahead on each word's first letter, IGNORECASE does not.
_PREFILTER = any_of(_DANGER_WORDS + " insert replace")
_DANGER = any_of(_DANGER_WORDS)
_HEAD = re.compile(r"[A-Za-z_]\w*")
_FILES = any_of(FILE_WORDS)
_STARTS = wordset(
    "SELECT INSERT UPDATE DELETE MERGE REPLACE UPSERT WITH CREATE DROP ALTER TRUNCATE GRANT "
    "REVOKE SET SHOW DESCRIBE DESC EXPLAIN USE BEGIN COMMIT ROLLBACK START SAVEPOINT RELEASE "
    "CALL EXEC EXECUTE PREPARE DEALLOCATE DECLARE LOCK UNLOCK ANALYZE VACUUM OPTIMIZE REINDEX "
    "CLUSTER COPY LOAD VALUES TABLE COMMENT KILL SHUTDOWN RENAME PRAGMA ATTACH DETACH CACHE "
    "UNCACHE REFRESH MSCK FROM SUMMARIZE PIVOT UNPIVOT IF WHILE RETURN PRINT GO DO LISTEN "
    "NOTIFY REASSIGN IMPORT EXPORT PUT GET LIST UNDROP FLUSH RESET HANDLER CHECKPOINT BULK"
)
_WRITES = wordset(
    "INSERT UPDATE DELETE DROP TRUNCATE ALTER GRANT CREATE REPLACE MERGE EXEC EXECUTE SHUTDOWN"
)
# Procedural blocks (T-SQL IF/WHILE, PL/SQL BEGIN ... END): the first statement inside is judged.
_BLOCKS = wordset("BEGIN IF ELSE WHILE ELSIF ELSEIF LOOP THEN")
_IN_BLOCK = wordset(
    "DROP TRUNCATE DELETE UPDATE ALTER EXEC EXECUTE SHUTDOWN PREPARE COPY MERGE GRANT"
)
_RUNS_SQL = wordset(
    "DBLINK DBLINK_EXEC DBLINK_SEND_QUERY QUERY_TO_XML QUERY_TO_XMLSCHEMA "
    "QUERY_TO_XML_AND_XMLSCHEMA"
)
_DESTROYS = wordset("UPDATE DELETE DROP TRUNCATE ALTER REPLACE MERGE")


def analyze_sql(text: str, scope: Scope = DEFAULT_SCOPE) -> tuple[Finding, bool]:
    """The first blocking statement's finding (else the riskiest), and whether the text read
    as SQL at all. Statements are judged in order; judging stops at a high or critical one."""
    text = normalize(text)
    read_only = scope.mode == "read_only"
    if not read_only and not _PREFILTER.search(text.lower()):
        return LOW, True
    quote = _open_quote(text)
    source = quote + text if quote else text
    best, is_sql = LOW, False
    judged: set[str] = set()  # statements every reading lexes alike need judging once
    for reading in readings(source, scope.dialect):
        found, sql_like = _judge(unwrap(source, reading), reading, quote is not None, scope, judged)
        best, is_sql = higher(best, found), is_sql or sql_like
        if best.blocks:
            break
    return best, is_sql


_OTHER_STRINGS = {
    "'": re.compile(r'"(?:[^"\\]|\\.|"")*"'),
    '"': re.compile(r"'(?:[^'\\]|\\.|'')*'"),
}


def _open_quote(text: str) -> str | None:
    """The quote a fragment meant to be pasted inside a string literal (SQL injection) leaves
    open: an odd number of them outside the other kind's strings (`'"hi'` holds no open `"`).
    The caller closes the string first, then judges what follows it."""
    for q in ("'", '"'):
        if (text.count(q) - text.count("\\" + q)) % 2:
            rest = _OTHER_STRINGS[q].sub("", text)
            if (rest.count(q) - rest.count("\\" + q)) % 2:
                return q
    return None


def _judge(
    source: str, reading: Reading, injected: bool, scope: Scope, judged: set[str]
) -> tuple[Finding, bool]:
    danger = _PREFILTER if injected else _DANGER
    read_only = scope.mode == "read_only"
    blanked, lowered, spans = split(source, reading)
    best, is_sql = LOW, False
    for n, (start, end) in enumerate(spans):  # each statement judged alone
        head = _HEAD.search(blanked, start, end)
        verb = head.group().upper() if head else ""
        is_sql = is_sql or verb in _STARTS or (injected and n == 0)
        chunk = source[start:end]
        # Nothing dangerous outside its strings and comments (a quoted name may be a
        # function: "pg_read_file"('/etc/passwd')): nothing to judge.
        quiet = not read_only and verb != "DO" and not danger.search(lowered, start, end)
        if quiet and ('"' not in chunk or not _FILES.search(chunk.lower())):
            continue
        if chunk in judged:
            continue
        if not disputed(chunk):
            judged.add(chunk)
        fast = verb in ("DELETE", "UPDATE") and not injected and not read_only
        if fast and not _FILES.search(lowered, start, end):
            after = head.end() - start if head else 0
            best = higher(best, fast_where(chunk, lowered[start:end], after, verb))
        else:
            for stmt in tokenize(chunk, reading):
                found = _statement(stmt, chunk, injected, scope)
                if read_only and not found.blocks:
                    found = higher(found, refusal(stmt))
                best = higher(best, found)
                if best.blocks:
                    break
        if best.blocks:
            break
    return best, is_sql


def _statement(stmt: list[Tok], text: str, injected: bool, scope: Scope) -> Finding:
    at, first = first_word(stmt)
    if at < 0:
        return LOW
    found = _verb(stmt[at:], text, first, scope)
    if injected and not found.blocks:
        verb = next((t.text for t in stmt if t.kind == "word" and t.text in _WRITES), None)
        if verb is not None:
            category: Category = "destructive" if verb in _DESTROYS else "code"
            reason = f"{verb} statement injected after a closed string literal"
            return Finding("high", reason, category)
    return found


def _verb(stmt: list[Tok], text: str, first: str, scope: Scope) -> Finding:
    """stmt starts at its verb `first`."""
    if first == "WITH":
        bodies, main = with_parts(stmt)
        best = LOW
        for part in (*bodies, main):
            best = higher(best, _statement(part, text, False, scope) if part else LOW)
            if best.blocks:
                return best.labelled("in a WITH statement: ") if part is not main else best
        return best
    if first in ("EXPLAIN", "DESCRIBE", "DESC", "ANALYZE"):
        analyze, inner = explained(stmt)
        if analyze and inner:
            return _statement(inner, text, False, scope).labelled(
                "EXPLAIN ANALYZE runs the statement: "
            )
        return LOW  # a plan only
    if first in _BLOCKS:
        at = next((i for i, w in words(stmt) if i > 0 and w in _IN_BLOCK), None)
        found = _statement(stmt[at:], text, False, scope) if at is not None else LOW
        return found if found.blocks else higher(found, file_access(stmt, text, first, scope))
    if first == "DO":  # PostgreSQL runs the body now: DO [LANGUAGE name] 'body'
        body = 3 if len(stmt) > 3 and stmt[1].text == "LANGUAGE" else 1
        if body < len(stmt) and stmt[body].kind == "str":
            return check_sql(_unquote(stmt[body].text), scope).labelled("in a DO block: ")
    found = _rule(stmt, text, first, scope)
    if found.blocks:
        return found
    found = higher(found, file_access(stmt, text, first, scope))
    return found if found.blocks else higher(found, _sql_in_strings(stmt, scope))


def _sql_in_strings(stmt: list[Tok], scope: Scope) -> Finding:
    """dblink_exec('conn', 'DROP TABLE t'), query_to_xml('DELETE ...'): SQL passed as text."""
    for i, t in enumerate(stmt[:-1]):
        if t.kind != "word" or t.text not in _RUNS_SQL or stmt[i + 1].text != "(":
            continue
        args = [a for a in stmt[i + 2 :] if a.depth > t.depth and a.kind == "str"]
        query = args[0] if t.text.startswith("QUERY") else args[-1] if args else None
        found = check_sql(_unquote(query.text), scope) if query else LOW
        if found.blocks:
            return found.labelled(f"{t.text.lower()} runs SQL given as text: ")
        if t.text.startswith("DBLINK"):
            return Finding("medium", f"{t.text.lower()} runs SQL over another connection", "code")
    return LOW


def _rule(stmt: list[Tok], text: str, first: str, scope: Scope) -> Finding:
    names = [w for _, w in words(stmt)]
    rest = names[1:]
    login = account(first, rest)
    if login is not None:
        return login
    if first == "DROP":
        return drop(rest)
    if first == "TRUNCATE":
        return Finding("high", "TRUNCATE deletes every row", "destructive")
    if first in ("DELETE", "UPDATE"):
        return where(stmt, text, 0, first)
    if first == "ALTER":
        return alter(stmt, text, words(stmt))
    if first == "GRANT":
        return grant(stmt, rest)
    if first in ("EXEC", "EXECUTE"):
        return exec_(stmt)
    if first == "PREPARE" and "FROM" in rest:
        source = stmt[next(i for i, w in words(stmt) if w == "FROM") + 1 :]
        if len(source) == 1 and source[0].kind == "str":
            return check_sql(source[0].text[1:-1].replace("''", "'"), scope)
        return Finding("high", "PREPARE of a statement built at run time (dynamic SQL)", "code")
    if first == "SHUTDOWN":
        return Finding("critical", "SHUTDOWN stops the database server", "system")
    if first == "MERGE" and "DELETE" in rest:
        return Finding("medium", "MERGE deletes matching rows", "destructive")
    return LOW


def _unquote(literal: str) -> str:
    if literal.startswith("$"):
        return literal[literal.index("$", 1) + 1 : literal.rindex("$", 0, len(literal) - 1)]
    return literal[1:-1].replace("''", "'")


def check_sql(text: str, scope: Scope = DEFAULT_SCOPE) -> Finding:
    return analyze_sql(text, scope)[0]
