"""SQL that reaches past the database: server files, shell commands, native code.

Reading a server file (`pg_read_file`, `LOAD_FILE`, `COPY t FROM '/path'`, `LOAD DATA INFILE`,
`OPENROWSET(BULK ...)`) sends its content to the client: exfiltration, or credentials when the
path names a secret. Writing one (`INTO OUTFILE`, `COPY t TO '/path'`, `lo_export`, sqlite's
`ATTACH '/path'`) changes the server's system; so do shell commands (`COPY ... PROGRAM`,
`xp_cmdshell`) and native code (`load_extension`, `SONAME`, untrusted procedural languages).
`COPY ... TO STDOUT`/`FROM STDIN` and psql's `\\copy` stay on the client and are fine; a
column or string merely named load_file is data (a function needs its parenthesis).
"""

from __future__ import annotations

import re

from nerve.safety.scope import Scope
from nerve.safety.sql_lex import Tok, any_of
from nerve.safety.verdict import Category, Finding, wordset

__all__ = ["FILE_WORDS", "file_access"]

# Searched (lower-cased, strings blanked) before a statement is tokenized for these rules.
FILE_WORDS = (
    "pg_read pg_ls_ pg_stat_file pg_file_ lo_import lo_export load_ copy infile outfile "
    "dumpfile bulk openrowset opendatasource attach utl_file xp_ sp_oa sp_configure soname "
    "sys_exec sys_eval plpythonu plpython3u plperlu pltclu plsh language"
)
_FILES = any_of(FILE_WORDS)
_READS = wordset(
    "PG_READ_FILE PG_READ_BINARY_FILE PG_LS_DIR PG_STAT_FILE PG_LS_LOGDIR PG_LS_WALDIR "
    "PG_LS_TMPDIR PG_LS_ARCHIVE_STATUSDIR LO_IMPORT LOAD_FILE"
)
_WRITES = wordset("LO_EXPORT PG_FILE_WRITE PG_FILE_UNLINK PG_FILE_RENAME PG_FILE_SYNC")
_COMMANDS = wordset(
    "LOAD_EXTENSION SYS_EXEC SYS_EVAL XP_CMDSHELL SP_OACREATE SP_OAMETHOD XP_REGWRITE "
    "XP_REGDELETEKEY XP_REGDELETEVALUE XP_SERVICECONTROL"
)
_REMOTE = wordset("OPENROWSET OPENDATASOURCE XP_DIRTREE XP_FILEEXIST XP_SUBDIRS")
_UNTRUSTED = wordset("C PLPYTHONU PLPYTHON3U PLPERLU PLTCLU PLSH")
_SECRET = re.compile(
    r"shadow|passwd|\.ssh/|id_(?:rsa|dsa|ecdsa|ed25519)|\.pgpass|\.my\.cnf|pg_hba|credential|"
    r"\.aws/|\.netrc|\.kube/|secret|token|\.env$|\.pem$|\.key$",
    re.I,
)


def _name(t: Tok) -> str:
    return t.text if t.kind == "word" else t.text.strip('"`[]').upper()


def _path_after(stmt: list[Tok], i: int) -> str:
    s = next((t.text for t in stmt[i : i + 4] if t.kind == "str"), "")
    return s[1:-1] if len(s) >= 2 and s[0] == s[-1] else s


def _read(what: str, path: str) -> Finding:
    category: Category = "credentials" if _SECRET.search(path) else "exfiltration"
    where = f" ({path})" if path else ""
    return Finding("high", f"{what} reads a file on the database server{where}", category)


def _write(what: str, path: str) -> Finding:
    where = f" ({path})" if path else ""
    return Finding("high", f"{what} writes a file on the database server{where}", "system")


def _local(path: str, scope: Scope) -> bool:
    """A client-side path the agent may read: inside the workspace, or plainly relative."""
    inside = scope.inside(path) if not path.startswith("~") else False
    if inside is not None:
        return inside
    return bool(path) and not path.startswith(("/", "~", "\\")) and ".." not in path


def file_access(stmt: list[Tok], text: str, verb: str, scope: Scope) -> Finding | None:
    """The first reach past the database in one statement (tokens from its verb on)."""
    if not stmt or not _FILES.search(text.lower(), stmt[0].start, stmt[-1].end):
        return None
    if verb == "COPY":
        return _copy(stmt, text)
    if verb == "LOAD" and any(t.text == "INFILE" for t in stmt):
        i = next(i for i, t in enumerate(stmt) if t.text == "INFILE")
        path = _path_after(stmt, i)
        if not any(t.text == "LOCAL" for t in stmt[:i]):
            return _read("LOAD DATA INFILE", path)
        if _local(path, scope):
            return Finding("medium", f"LOAD DATA LOCAL reads the local file {path}")
        category: Category = "credentials" if _SECRET.search(path) else "exfiltration"
        return Finding(
            "high", f"LOAD DATA LOCAL sends the local file {path} to the server", category
        )
    if verb == "ATTACH":
        path = re.sub(r"^file:|\?.*$", "", _path_after(stmt, 1))
        if path in ("", ":memory:") or _local(path, scope):
            return None
        return _write("ATTACH DATABASE", path)
    if verb == "BULK":
        return _read("BULK INSERT", _path_after(stmt, 3))
    for i, t in enumerate(stmt):
        quoted = t.kind == "ident" or t.text[:1] == '"'  # a string in MySQL, a name elsewhere
        name = _name(t) if t.kind == "word" or quoted else ""
        if not name:
            continue
        call = i + 1 < len(stmt) and stmt[i + 1].text == "("
        if name in ("OUTFILE", "DUMPFILE") and stmt[i - 1].text == "INTO":
            return _write(f"INTO {name}", _path_after(stmt, i + 1))
        if name in _READS and call:
            return _read(f"{name.lower()}()", _path_after(stmt, i + 2))
        if name in _WRITES and call:
            return _write(f"{name.lower()}()", _path_after(stmt, i + 2))
        if name in _COMMANDS:
            return Finding("high", f"{name.lower()} runs code on the database server", "system")
        if name in _REMOTE:
            reason = f"{name} reads server files or queries another server"
            return Finding("high", reason, "exfiltration")
        if name == "UTL_FILE":
            return Finding("high", "UTL_FILE reads and writes server files", "system")
        if name == "SP_CONFIGURE" and any("xp_cmdshell" in s.text.lower() for s in stmt):
            return Finding("high", "sp_configure enables xp_cmdshell", "system")
        if name == "SONAME" or (name == "LANGUAGE" and i + 1 < len(stmt)):
            lang = _name(stmt[i + 1]) if name == "LANGUAGE" else "C"
            if lang in _UNTRUSTED:
                reason = "native or untrusted-language code that runs on the database server"
                return Finding("high", reason, "system")
    return None


def _copy(stmt: list[Tok], text: str) -> Finding | None:
    if stmt[0].start > 0 and text[stmt[0].start - 1] == "\\":
        return None  # psql's \copy: the client reads and writes its own files
    for i, t in enumerate(stmt):
        if t.depth != 0 or t.text not in ("FROM", "TO") or i + 1 >= len(stmt):
            continue
        nxt = stmt[i + 1]
        if nxt.text == "PROGRAM":
            reason = "COPY ... PROGRAM runs a shell command on the database server"
            return Finding("high", reason, "system")
        if nxt.kind == "str":
            path = _path_after(stmt, i + 1)
            return _read("COPY ... FROM", path) if t.text == "FROM" else _write("COPY ... TO", path)
    return None
