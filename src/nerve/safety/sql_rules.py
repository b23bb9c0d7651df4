"""The verbs that destroy or run unseen code: DROP, TRUNCATE, ALTER ... DROP, GRANT ALL, EXEC.

Each rule takes one statement's tokens from its verb on and returns a Finding; DELETE and UPDATE
are judged by their WHERE (sql_predicate.py), server files by sql_files.py.
"""

from __future__ import annotations

from nerve.safety.sql_lex import Tok
from nerve.safety.sql_predicate import where
from nerve.safety.verdict import LOW, Finding, RiskLevel, higher

__all__ = ["account", "alter", "drop", "exec_", "grant"]

_DROP_SKIP = frozenset({"TEMPORARY", "TEMP", "MATERIALIZED", "EXTERNAL", "IF", "EXISTS"})
_DROP_HARMLESS = frozenset({"DEFAULT", "NOT", "NULL", "EXPRESSION", "IDENTITY", "STORED"})
_DROP_STRUCTURE = frozenset({"CONSTRAINT", "INDEX", "KEY", "PRIMARY", "FOREIGN", "CHECK", "UNIQUE"})


def drop(rest: list[str]) -> Finding:
    obj = next((w for w in rest if w not in _DROP_SKIP), "object")
    level: RiskLevel = "critical" if obj in ("DATABASE", "SCHEMA") else "high"
    return Finding(level, f"DROP {obj} destroys it and its data", "destructive")


def grant(stmt: list[Tok], rest: list[str]) -> Finding:
    if "ALL" not in rest[:2]:
        return LOW
    if any(t.text == "*.*" for t in stmt):
        return Finding("high", "GRANT ALL on every database", "system")
    return Finding("medium", "GRANT ALL privileges", "system")


def account(first: str, rest: list[str]) -> Finding | None:
    """Logins: a new password locks its owner out; SUPERUSER hands over the server."""
    if first == "SET" and rest[:1] == ["PASSWORD"]:
        return Finding("high", "SET PASSWORD changes a login's password", "credentials")
    if first not in ("ALTER", "CREATE") or rest[:1] not in (["USER"], ["ROLE"], ["LOGIN"]):
        return None
    if "SUPERUSER" in rest:
        return Finding("high", f"{first} {rest[0]} ... SUPERUSER grants full control", "system")
    if first == "ALTER" and ("IDENTIFIED" in rest or "PASSWORD" in rest):
        return Finding("high", f"ALTER {rest[0]} changes a login's password", "credentials")
    return None


def alter(stmt: list[Tok], text: str, words: list[tuple[int, str]]) -> Finding:
    best = LOW
    for pos, (i, w) in enumerate(words):
        if w == "DELETE" and words[pos - 1][1] != "ON":  # not ON DELETE CASCADE
            return where(stmt, text, i, "ALTER ... DELETE")
        if w != "DROP":
            continue
        nxt = [x for _, x in words[pos + 1 : pos + 4] if x not in ("IF", "EXISTS")]
        target = nxt[0] if nxt else (stmt[i + 1].text if i + 1 < len(stmt) else "")
        if target in _DROP_HARMLESS:
            continue
        if target in _DROP_STRUCTURE:
            found = Finding(
                "medium", f"ALTER ... DROP {target} removes a constraint", "destructive"
            )
            best = higher(best, found)
        else:
            what = target if target in ("COLUMN", "PARTITION") else "COLUMN"
            return Finding("high", f"ALTER ... DROP {what} deletes its data", "destructive")
    return best


def exec_(stmt: list[Tok]) -> Finding:
    """EXEC/EXECUTE at stmt[0]."""
    nxt = stmt[1] if len(stmt) > 1 else None
    if nxt is None:
        return LOW
    name = nxt.text.upper()
    if "XP_CMDSHELL" in name:
        return Finding("high", "xp_cmdshell runs operating-system commands", "system")
    if (
        nxt.kind == "str"
        or nxt.text in ("(", "IMMEDIATE")
        or name.startswith("@")
        or name in ("SP_EXECUTESQL", "SYS.SP_EXECUTESQL")
    ):
        return Finding("high", "EXEC of a string built at run time (dynamic SQL)", "code")
    if "FOREACH" in name:  # sp_MSforeachtable 'DROP TABLE ?': the argument is SQL
        return Finding("high", f"EXEC {nxt.text} runs SQL given as a string on each", "code")
    return Finding(
        "medium", f"EXEC runs the stored procedure {nxt.text}, whose effect is unseen", "code"
    )
