"""One path a command deletes, writes, moves or reads, judged three ways.

By class (paths.classify: root, home, system, the whole working directory, temp...); by the
workspace the check was given (scope.roots: inside is the user's business, outside is `high`
`workspace`, temp is nobody's); and by what the file is (sensitive.py: start-up files and keys
are `persistence`, secrets are `credentials`, passwd and sudoers are `system`).

Relative paths point where the last `cd` went (Ctx.cwd, tracked by shell.py), else at the
scope's cwd. After a `cd` nerve cannot follow (`cd "$DIR"`), a recursive relative delete is
`medium` whatever its name.
"""

from __future__ import annotations

import posixpath
from typing import Literal

from nerve.safety.invocation import Ctx
from nerve.safety.paths import PathClass, alternatives, classify, expand, is_os_critical
from nerve.safety.sensitive import (
    history_file,
    persistence_file,
    secret_file,
    system_binary,
    system_file,
)
from nerve.safety.verdict import LOW, Finding, RiskLevel, risk_rank

__all__ = [
    "WHERE",
    "judge_delete",
    "judge_read",
    "judge_write",
    "outside_workspace",
    "resolved",
    "workspace_of",
]

WHERE: dict[PathClass, str] = {
    "root": "the root directory",
    "home_root": "a home directory",
    "home": "a path inside a home directory",
    "system_root": "a top-level system directory",
    "top_level": "a top-level directory",
    "system": "a path inside a system directory",
    "cwd_all": "the whole working directory",
    "device": "a disk device",
    "relative": "a path inside the workspace",
    "absolute": "an absolute path",
    "unknown": "a path built from an unresolved variable",
    "temp": "a temporary path",
}
# Classes no workspace makes routine: a workspace of `/` or `~` does not make `rm -rf ~` fine.
_ALWAYS_JUDGED = frozenset({"root", "home_root", "system_root", "device", "cwd_all"})
# Without a workspace: a recursive delete of some other absolute path (/work/app/build). High:
# measured on nl2bash and the labelled allow rows, it adds no false positive over `medium`.
ABSOLUTE_RECURSIVE: RiskLevel = "high"

# Where a `cd` makes a relative delete worse than it reads: `cd / && rm -rf etc`.
_AFTER_CD = frozenset({"root", "home_root", "system_root", "top_level", "system", "device"})

Where = Literal["inside", "root", "outside"]


def resolved(path: str, ctx: Ctx) -> str | None:
    """The absolute path a word names, after `~`, variables, `..` and the last `cd`."""
    real = expand(path)
    if real is None:
        return None
    if real.startswith("/"):
        return posixpath.normpath(real)
    cwd = ctx.cwd if ctx.cwd is not None else ctx.scope.cwd
    return posixpath.normpath(posixpath.join(cwd, real)) if cwd else None


def workspace_of(path: str, ctx: Ctx) -> Where | None:
    """Inside the workspace, a workspace root itself, or outside; None without a workspace, on
    a remote host, for a path nerve cannot resolve, and for temp paths (nobody's)."""
    roots = ctx.scope.roots
    if not roots or ctx.remote:
        return None
    real = resolved(path, ctx)
    if real is None:
        return None
    for root in roots:
        if real == root:
            return "root"
        if real.startswith(root.rstrip("/") + "/"):
            return "inside"
    return None if classify(real) == "temp" else "outside"


def outside_workspace(verb: str, action: str, path: str) -> Finding:
    return Finding("high", f"{verb} {action} outside the workspace ({path})", "workspace")


def _by_class(cls: PathClass, where: str, recursive: bool, force: bool, verb: str) -> Finding:
    if cls == "temp":
        return LOW
    if cls in ("root", "home_root", "system_root"):
        if recursive:
            return Finding("critical", f"{verb} deletes {where} recursively", "destructive")
        level: RiskLevel = "high" if cls == "system_root" else "medium"
        return Finding(level, f"{verb} targets {where}", "destructive")
    if cls == "top_level":
        return Finding("high" if recursive else "medium", f"{verb} deletes {where}", "destructive")
    if cls in ("system", "device"):
        return Finding(
            "high", f"{verb} deletes {where}", "system" if cls == "system" else "destructive"
        )
    if cls == "home" and recursive:
        return Finding("high", f"{verb} deletes {where} recursively", "destructive")
    if cls == "home":
        return LOW
    if cls == "cwd_all":
        if recursive:
            return Finding("high", f"{verb} deletes {where}", "destructive")
        return Finding("medium", f"{verb} deletes every file in {where}", "destructive")
    if recursive and cls == "absolute" and ABSOLUTE_RECURSIVE != "medium":
        return Finding(ABSOLUTE_RECURSIVE, f"{verb} deletes {where} recursively", "destructive")
    if recursive and (force or cls == "unknown"):
        return Finding("medium", f"{verb} deletes {where} recursively", "destructive")
    return LOW


def _sensitive_delete(path: str, verb: str) -> Finding | None:
    planted = persistence_file(path)
    if planted is not None:
        return Finding("high", f"{verb} deletes {planted[1]}", "persistence")
    system = system_file(path)
    if system is not None:
        return Finding("high", f"{verb} deletes {system}", "system")
    if history_file(path):  # covering tracks: an agent has no reason to hide what it ran
        return Finding("high", f"{verb} destroys the shell history {path}", "system")
    return None


def judge_delete(path: str, *, recursive: bool, force: bool, ctx: Ctx, verb: str) -> Finding:
    """How bad deleting `path` is; `verb` names the command for the reason. A word with braces
    is judged by the worst path it expands to (`rm -rf /tmp/{a,../etc}`)."""
    paths = alternatives(path)
    if len(paths) > 1:
        each = [
            judge_delete(p, recursive=recursive, force=force, ctx=ctx, verb=verb) for p in paths
        ]
        return max(each, key=lambda f: risk_rank(f.risk))
    simple = path[:1].isalnum() and ".." not in path
    if not recursive and not ctx.remote and simple and not ctx.cwd and not ctx.scope.roots:
        return LOW  # one file or a glob inside the workspace
    if ctx.remote and recursive:  # nothing is known about the remote machine's layout
        where = f"{WHERE[classify(path)]} ({path})"
        return Finding("high", f"{verb} deletes recursively on a remote host: {where}")
    sensitive = _sensitive_delete(path, verb) if "/" in path or "~" in path else None
    if sensitive is not None:
        return sensitive
    cls = classify(path)
    ws = workspace_of(path, ctx)
    if ws == "inside" and (cls not in _ALWAYS_JUDGED or _below_a_root(path, ctx)):
        cls = "relative"  # the workspace's own files: as `rm -rf build` (medium if forced)
    where = f"{WHERE[cls]} ({path})"
    if ws == "root" and cls not in _ALWAYS_JUDGED:
        cls, where = "cwd_all", f"the whole workspace ({path})"
    found = _by_class(cls, where, recursive, force, verb)
    if cls in ("relative", "cwd_all") and ctx.cwd is not None and ws is None:
        found = _after_cd(path, found, recursive, force, ctx, verb)
    if ws == "outside" and risk_rank(found.risk) <= 2:
        return outside_workspace(verb, "deletes", path)
    if simple and not recursive and found.risk == "low":
        return LOW
    return found


def _below_a_root(path: str, ctx: Ctx) -> bool:
    """`*` or `.` after `cd build` inside the workspace: a directory below a root, not a root."""
    if classify(path) != "cwd_all" or not ctx.cwd:
        return False
    real = resolved(path.rstrip("*").rstrip("/") or ".", ctx)
    return real is not None and workspace_of(real, ctx) == "inside"


def _after_cd(
    path: str, found: Finding, recursive: bool, force: bool, ctx: Ctx, verb: str
) -> Finding:
    """A relative path after a `cd`: judged where it really points."""
    real = resolved(path, ctx)
    if real is None:
        if recursive and found.risk == "low":
            return Finding("medium", f"{verb} deletes {path} after a cd nerve cannot follow")
        return found
    cls = classify(real)
    if cls == "temp":
        return LOW
    if cls not in _AFTER_CD or (cls == "system" and not is_os_critical(real)):
        return found  # `cd /srv/app && rm -rf build`, `cd ~/proj && rm -rf dist`: as written
    moved = _by_class(cls, f"{WHERE[cls]} ({real}, after cd)", recursive, force, verb)
    return moved if risk_rank(moved.risk) > risk_rank(found.risk) else found


def judge_write(
    path: str, ctx: Ctx, verb: str, *, append: bool = False, action: str = "writes"
) -> Finding:
    """Writing `path`: a start-up file or key (persistence), a system file (system), or a file
    outside the workspace (workspace; appending there is `medium`)."""
    if "{" in path and len(paths := alternatives(path)) > 1:
        each = [judge_write(p, ctx, verb, append=append, action=action) for p in paths]
        return max(each, key=lambda f: risk_rank(f.risk))
    action = "appends to" if append else action
    planted = persistence_file(path)
    if planted is not None:
        return Finding(planted[0], f"{verb} {action} {planted[1]}", "persistence")
    system = system_file(path)
    if system is not None:
        return Finding("high", f"{verb} {action} {system}", "system")
    if not append and system_binary(path):
        return Finding("high", f"{verb} {action} the system program {path}", "system")
    if not append and history_file(path):  # emptied or replaced: what was run is gone
        return Finding("high", f"{verb} {action} the shell history {path}", "system")
    if workspace_of(path, ctx) == "outside":
        if append:
            return Finding("medium", f"{verb} {action} {path}, outside the workspace", "workspace")
        return outside_workspace(verb, action, path)
    return LOW


def judge_read(path: str, verb: str) -> Finding:
    """Reading `path` into the output (and so into the agent's context) or a copy."""
    secret = secret_file(path)
    if secret is None:
        return LOW
    return Finding(secret[0], f"{verb} reads {secret[1]}", "credentials")
