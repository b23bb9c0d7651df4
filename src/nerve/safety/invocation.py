"""What the shell rules receive: one program run with its arguments, in its context."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import pairwise

from nerve.safety.lexer import Command
from nerve.safety.scope import DEFAULT_SCOPE, Scope
from nerve.safety.verdict import Finding

__all__ = ["Ctx", "Invocation", "flags_of", "positionals", "with_next"]

_MAX_NESTING = 8


@dataclass(slots=True)
class Ctx:
    """Where a command runs: how deeply nested, on a remote host, with which variables set."""

    analyze: Callable[[str, Ctx], Finding]
    depth: int = 0
    remote: bool = False
    env: dict[str, str] = field(default_factory=dict)
    version: int = 0  # bumped on every assignment: a line judged at this version means the same
    scope: Scope = DEFAULT_SCOPE  # the workspace and SQL mode the check was asked under
    cwd: str | None = None  # after a `cd`: where relative paths point now ("" = unknowable)
    fetched: set[str] = field(default_factory=set)  # files a downloader wrote (computed.py)
    # What the script defined for later (scriptdefs.py): function bodies by name, and the text
    # of files it wrote (`echo CMD > x.sh`). Shared with nested contexts: `eval f` sees `f`.
    functions: dict[str, str] = field(default_factory=dict)
    written: dict[str, str] = field(default_factory=dict)

    def nested(self, text: str, label: str, *, remote: bool = False) -> Finding:
        """Judge text that this command will run as a script (bash -c, eval, ssh host CMD)."""
        if self.depth >= _MAX_NESTING:
            return Finding("high", f"{label}: commands nested too deeply to analyse")
        inner = Ctx(
            self.analyze,
            self.depth + 1,
            self.remote or remote,
            dict(self.env),
            scope=self.scope,
            cwd="" if remote else self.cwd,
            fetched=self.fetched if not remote else set(),
            functions=self.functions if not remote else {},
            written=self.written if not remote else {},
        )
        found = self.analyze(text, inner)
        if found.risk == "low":
            return found
        return found.labelled(f"{label}: ")


@dataclass(slots=True)
class Invocation:
    prog: str  # basename, lower-case, wrappers (sudo, env, nohup...) already stripped
    args: list[str]
    cmd: Command  # the lexed command: redirects and here-documents
    upstream: Command | None  # the command piping into this one, if any
    from_xargs: bool  # more arguments arrive on stdin (xargs)
    ctx: Ctx


def flags_of(args: list[str]) -> tuple[set[str], set[str]]:
    """Short flag letters (from -rf, -r -f) and long flags (--force, --force=1 → --force)."""
    short: set[str] = set()
    long: set[str] = set()
    for arg in args:
        if arg == "--":
            break
        if arg.startswith("--"):
            long.add(arg.split("=", 1)[0].lower())
        elif arg.startswith("-") and len(arg) > 1:
            short.update(arg[1:])
    return short, long


def positionals(args: list[str], takes_value: frozenset[str] = frozenset()) -> list[str]:
    """Arguments that are not options (everything after `--` counts), skipping option values."""
    out: list[str] = []
    skip = False
    for i, arg in enumerate(args):
        if skip:
            skip = False
            continue
        if arg == "--":
            out.extend(args[i + 1 :])
            break
        if arg.startswith("-") and len(arg) > 1:
            skip = arg in takes_value
            continue
        out.append(arg)
    return out


def with_next(args: list[str]) -> list[tuple[str, str]]:
    """Each argument with the one after it ("" after the last): options and their values."""
    return list(pairwise([*args, ""]))
