"""Where a check is judged: the workspace a command runs in, and how SQL is read.

A command's paths mean nothing without its working directory: `rm -rf build` inside the
agent's checkout is the user's business, `rm -rf /srv/data` outside it is not. `cwd` is where
the command runs (relative paths resolve against it); `roots` are the directories the agent may
change (the workspace; `cwd` alone when none are given). Without either, paths are judged by
their class only (paths.py).

`mode="read_only"` lets through only statements that read (SELECT, SHOW, EXPLAIN without
ANALYZE, ...): for agents pointed at a production database. `dialect` says which SQL grammar
reads the text; "any" takes the strictest reading of every construct (a `--1` is a comment in
PostgreSQL but not in MySQL, so "any" judges what follows it).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Literal, get_args

from nerve.errors import RequestError

__all__ = [
    "DEFAULT_SCOPE",
    "DIALECTS",
    "MAX_ROOTS",
    "MODES",
    "Dialect",
    "Mode",
    "Scope",
    "ScopeError",
]

Mode = Literal["default", "read_only"]
Dialect = Literal["any", "postgres", "mysql", "mariadb", "sqlite", "mssql", "oracle"]
MODES: tuple[str, ...] = get_args(Mode)
DIALECTS: tuple[str, ...] = get_args(Dialect)
MAX_ROOTS = 32


class ScopeError(RequestError):
    """A scope the caller gave that cannot be used (a 400): the message names the field."""


@dataclass(frozen=True, slots=True)
class Scope:
    cwd: str | None = None  # absolute and normalized
    roots: tuple[str, ...] = ()  # absolute and normalized; (cwd,) when only cwd was given
    mode: Mode = "default"
    dialect: Dialect = "any"

    @classmethod
    def of(
        cls,
        cwd: str | None = None,
        roots: tuple[str, ...] | list[str] = (),
        mode: str = "default",
        dialect: str = "any",
    ) -> Scope:
        """A checked scope; raises ScopeError naming the bad field."""
        if mode not in MODES:
            raise ScopeError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        if dialect not in DIALECTS:
            raise ScopeError(f"dialect must be one of {', '.join(DIALECTS)}, got {dialect!r}")
        if len(roots) > MAX_ROOTS:
            raise ScopeError(f"at most {MAX_ROOTS} roots, got {len(roots)}")
        clean_cwd = _absolute(cwd, "cwd") if cwd is not None else None
        clean_roots = tuple(_absolute(root, "roots") for root in roots)
        if not clean_roots and clean_cwd is not None:
            clean_roots = (clean_cwd,)
        return cls(clean_cwd, clean_roots, mode, dialect)  # type: ignore[arg-type]

    @property
    def has_workspace(self) -> bool:
        return bool(self.roots)

    def resolve(self, path: str) -> str | None:
        """`path` made absolute against `cwd`, normalized; None when it cannot be (relative
        with no cwd). Variables and `~` must be expanded by the caller first."""
        if path.startswith("/"):
            return posixpath.normpath("/" + path.lstrip("/"))
        if self.cwd is None:
            return None
        return posixpath.normpath(posixpath.join(self.cwd, path))

    def inside(self, path: str) -> bool | None:
        """Is `path` (absolute or relative to cwd) inside one of the roots? None when there is
        no workspace to judge by, or the path cannot be resolved. A root itself is inside:
        emptying the whole workspace is judged by the rules for `.` and `*`."""
        if not self.roots:
            return None
        real = self.resolve(path)
        if real is None:
            return None
        return any(real == root or real.startswith(root.rstrip("/") + "/") for root in self.roots)


def _absolute(path: object, field: str) -> str:
    if not isinstance(path, str) or not path.strip():
        raise ScopeError(f"{field}: expected a non-empty absolute path, got {path!r}")
    if "\x00" in path:
        raise ScopeError(f"{field}: the path contains a NUL byte")
    if not path.startswith("/"):
        raise ScopeError(f"{field}: {path!r} is not an absolute path")
    return posixpath.normpath("/" + path.lstrip("/"))


DEFAULT_SCOPE = Scope()
