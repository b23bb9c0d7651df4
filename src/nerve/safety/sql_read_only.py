"""Read-only mode: a statement passes only if it reads (scope.mode == "read_only").

An allow-list, so an unknown statement is refused. Reads: SELECT, VALUES, TABLE, WITH whose
every CTE and main statement reads, SHOW, DESCRIBE/DESC, EXPLAIN (with ANALYZE only when the
statement it runs reads), USE, cursors over reads (DECLARE ... FOR SELECT, FETCH, MOVE, CLOSE),
transaction control, session settings and sqlite pragmas that only report. The line is drawn
where PostgreSQL draws it for a READ ONLY transaction, so `SELECT ... FOR UPDATE/SHARE` (row
locks), `nextval()`/`setval()` and `SELECT ... INTO` are refused; so are lock-taking and
session-killing functions and functions that run SQL given as a string. Refused too: SET of
anything beyond the session (GLOBAL, PERSIST, roles, passwords) or that turns read-only off,
`PRAGMA x = v` and `PRAGMA x(v)` other than the table-valued queries (they set values, some in
the database file), COMMIT/ROLLBACK PREPARED (they finish another session's writes), and MySQL's
RESET MASTER/REPLICA (deletes logs). A user-defined function called from a SELECT may still
write: pair this mode with a read-only database role.
"""

from __future__ import annotations

from nerve.safety.sql_lex import Tok
from nerve.safety.sql_shape import explained, first_word, with_parts
from nerve.safety.verdict import Finding, wordset

__all__ = ["refusal"]

_ALWAYS = wordset(
    "SHOW USE FETCH MOVE CLOSE START SAVEPOINT RELEASE END ABORT UNLOCK BEGIN DESCRIBE DESC"
)
_TX_WORDS = wordset(
    "TRANSACTION TRAN WORK READ ONLY WRITE ISOLATION LEVEL SERIALIZABLE REPEATABLE COMMITTED "
    "UNCOMMITTED DEFERRABLE NOT DEFERRED IMMEDIATE EXCLUSIVE DISTRIBUTED ,"
)
_WRITE_FUNCS = wordset(
    "NEXTVAL SETVAL PG_TERMINATE_BACKEND PG_CANCEL_BACKEND PG_RELOAD_CONF PG_ROTATE_LOGFILE "
    "PG_SWITCH_WAL PG_CREATE_RESTORE_POINT PG_PROMOTE PG_LOGICAL_SLOT_GET_CHANGES "
    "PG_LOGICAL_SLOT_GET_BINARY_CHANGES PG_REPLICATION_SLOT_ADVANCE SET_CONFIG DBLINK "
    "DBLINK_EXEC QUERY_TO_XML QUERY_TO_XMLSCHEMA QUERY_TO_XML_AND_XMLSCHEMA GET_LOCK "
    "RELEASE_LOCK RELEASE_ALL_LOCKS SYS_EXEC SYS_EVAL LO_IMPORT LO_EXPORT LO_UNLINK LO_CREATE "
    "LO_CREAT LO_FROM_BYTEA LO_PUT LO_TRUNCATE PG_FILE_WRITE PG_FILE_UNLINK PG_FILE_RENAME"
)
_WRITE_PREFIXES = ("PG_ADVISORY", "PG_TRY_ADVISORY", "PG_CREATE_", "PG_DROP_", "PG_STAT_RESET")
_SET_BEYOND_SESSION = wordset("GLOBAL PERSIST PERSIST_ONLY PASSWORD ROLE AUTHORIZATION")
_RESET_SERVER = wordset("MASTER REPLICA SLAVE QUERY PERSIST BINARY")
_PRAGMA_QUERIES = wordset(
    "TABLE_INFO TABLE_XINFO TABLE_LIST INDEX_INFO INDEX_XINFO INDEX_LIST FOREIGN_KEY_LIST "
    "FOREIGN_KEY_CHECK INTEGRITY_CHECK QUICK_CHECK"
)
_PRAGMA_ACTIONS = wordset("OPTIMIZE WAL_CHECKPOINT INCREMENTAL_VACUUM")
_OFF = frozenset({"OFF", "FALSE", "0", "NO", "'OFF'", "'FALSE'", "'0'"})


def _refuse(why: str) -> Finding:
    return Finding("high", f"read-only mode: {why}", "read_only")


def refusal(stmt: list[Tok]) -> Finding | None:
    """None when the statement only reads; else a high finding naming what it would change."""
    at, verb = first_word(stmt)
    if not verb:
        return None if all(t.text in "()" for t in stmt) else _refuse("not a statement")
    found = _by_verb(stmt, at, verb)
    return found if found is not None else _functions(stmt)


def _by_verb(stmt: list[Tok], at: int, verb: str) -> Finding | None:
    rest = [t.text for t in stmt[at + 1 :]]
    if verb in ("SELECT", "VALUES", "TABLE"):
        return _select(stmt)
    if verb == "WITH":
        bodies, main = with_parts(stmt, at)
        for part in (*bodies, main):
            found = refusal(part) if part else _refuse("WITH without a statement")
            if found is not None:
                return found
        return None
    if verb in ("EXPLAIN", "DESCRIBE", "DESC") or (verb == "ANALYZE" and _explains(stmt, at)):
        analyze, inner = explained(stmt, at)
        found = refusal(inner) if analyze and inner else None
        return found.labelled("EXPLAIN ANALYZE runs the statement; ") if found else None
    if verb in ("COMMIT", "ROLLBACK"):
        if "PREPARED" in rest:
            return _refuse(f"{verb} PREPARED finishes another session's writes")
        return None
    if verb == "BEGIN":
        j = next((j for j in range(at + 1, len(stmt)) if stmt[j].text not in _TX_WORDS), None)
        return refusal(stmt[j:]) if j is not None and j + 1 < len(stmt) else None  # a block
    if verb in _ALWAYS:
        return None
    if verb == "SET":
        return _set(rest)
    if verb == "RESET":
        if rest and rest[0] in _RESET_SERVER:
            return _refuse(f"RESET {rest[0]} changes the server")
        return None
    if verb == "PRAGMA":
        return _pragma(rest)
    if verb == "COPY":
        return _copy(stmt, at)
    if verb == "DECLARE" and "CURSOR" in rest:
        query = next((i for i in range(at, len(stmt)) if stmt[i].text == "FOR"), None)
        return refusal(stmt[query + 1 :]) if query is not None else None
    return _refuse(f"{verb} is not a read")


def _copy(stmt: list[Tok], at: int) -> Finding | None:
    """COPY ... TO STDOUT reads (to the client); every other COPY writes rows or a file."""
    to = next((i for i, t in enumerate(stmt) if t.depth == 0 and t.text == "TO"), -1)
    if to < 0 or to + 1 >= len(stmt) or stmt[to + 1].text != "STDOUT":
        return _refuse("COPY other than COPY ... TO STDOUT writes rows or a file")
    if at + 1 < len(stmt) and stmt[at + 1].text == "(":
        return refusal(
            [Tok(t.kind, t.text, t.depth - 1, t.start, t.end) for t in stmt[at + 2 : to - 1]]
        )
    return None


def _explains(stmt: list[Tok], at: int) -> bool:
    return bool(explained(stmt, at)[1])


def _select(stmt: list[Tok]) -> Finding | None:
    for i, t in enumerate(stmt):
        if t.kind != "word":
            continue
        nxt = stmt[i + 1].text if i + 1 < len(stmt) else ""
        if t.text == "INTO" and not nxt.startswith(("@", ":")):
            return _refuse("SELECT ... INTO writes a table or a file")
        if t.text == "FOR" and nxt in ("UPDATE", "SHARE", "NO", "KEY"):
            return _refuse(f"SELECT ... FOR {nxt} locks rows (a write to the database)")
        if t.text == "LOCK" and nxt == "IN":
            return _refuse("SELECT ... LOCK IN SHARE MODE locks rows")
    return None


def _functions(stmt: list[Tok]) -> Finding | None:
    for i, t in enumerate(stmt[:-1]):
        writes = t.text in _WRITE_FUNCS or t.text.startswith(_WRITE_PREFIXES)
        if writes and t.kind == "word" and stmt[i + 1].text == "(":
            return _refuse(f"{t.text.lower()}() changes database or server state")
    return None


def _set(rest: list[str]) -> Finding | None:
    for i, w in enumerate(rest):
        if w in _SET_BEYOND_SESSION or w.startswith(("@@GLOBAL", "@@PERSIST")):
            return _refuse(f"SET {w} changes more than this session's settings")
        if w == "READ" and i + 1 < len(rest) and rest[i + 1] == "WRITE":
            return _refuse("SET ... READ WRITE turns read-only transactions off")
        value = rest[i + 2] if i + 2 < len(rest) and rest[i + 1] in ("=", "TO") else ""
        if "READ_ONLY" in w and value.upper() in _OFF:
            return _refuse(f"SET {w.lower()} = {value} turns read-only off")
    return None


def _pragma(rest: list[str]) -> Finding | None:
    name = rest[2] if len(rest) > 2 and rest[1] == "." else (rest[0] if rest else "")
    if name in _PRAGMA_ACTIONS:
        return _refuse(f"PRAGMA {name.lower()} writes to the database")
    if "=" in rest:
        return _refuse(f"PRAGMA {name.lower()} = ... changes a setting")
    if "(" in rest and name not in _PRAGMA_QUERIES:
        return _refuse(f"PRAGMA {name.lower()}(...) changes a setting")
    return None
