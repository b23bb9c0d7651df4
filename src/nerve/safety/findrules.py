"""find: `-delete`, and the commands `-exec`, `-execdir`, `-ok` and `-okdir` run on each match.

Unfiltered, a delete is `rm -rf` of each starting point; filtered (`-name '*.pyc'`), only
sweeping starting points matter (/, ~, /etc). The command after `-exec` is unwrapped like any
other (`-exec sudo rm`, `-exec env X=1 rm`, `-exec busybox rm`) and anything but a deleter or a
permission change is judged as a nested command. Words inside an `-exec ... ;` are that
command's arguments: `find . -exec echo -delete \\;` prints, it does not delete.
"""

from __future__ import annotations

from shlex import join

from nerve.safety.invocation import Invocation
from nerve.safety.paths import classify
from nerve.safety.targets import WHERE, judge_delete, outside_workspace, workspace_of
from nerve.safety.verdict import LOW, Finding, RiskLevel, higher, wordset
from nerve.safety.wrappers import basename, unwrap

__all__ = ["FIND_FILTERS", "find", "find_delete", "find_roots"]

FIND_FILTERS = wordset(
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -type -mtime -mmin "
    "-atime -amin -ctime -cmin -newer -size -user -group -empty -perm -links -inum -uid -gid "
    "-samefile -nouser -nogroup -lname -ilname -newermt -used"
)
_EXECS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_DELETERS = frozenset({"rm", "shred", "unlink", "srm"})
_PERMS = frozenset({"chmod", "chown", "chgrp"})
_SWEEPING = frozenset({"root", "home_root", "system_root", "system"})


def find_roots(args: list[str]) -> list[str]:
    roots: list[str] = []
    for arg in args:
        if arg.startswith(("-", "(", "!", ")")):
            break
        roots.append(arg)
    return roots or ["."]


def _split(args: list[str]) -> tuple[list[str], list[list[str]]]:
    """find's own words, and the command of each -exec/-execdir/-ok/-okdir."""
    own: list[str] = []
    execs: list[list[str]] = []
    i = 0
    while i < len(args):
        if args[i] in _EXECS:
            end = next((j for j in range(i + 1, len(args)) if args[j] in (";", "+")), len(args))
            execs.append(args[i + 1 : end])
            i = end + 1
            continue
        own.append(args[i])
        i += 1
    return own, execs


def find(inv: Invocation) -> Finding:
    own, execs = _split(inv.args)
    roots = find_roots(own)
    filtered = any(a in FIND_FILTERS for a in own)
    deletes = "-delete" in own
    perms = False
    best = LOW
    for words in execs:
        real, _, nested = unwrap(words)
        if nested is not None:
            best = higher(best, inv.ctx.nested(nested, "find -exec"))
        if not real:
            continue
        prog = basename(real[0])
        if prog in _DELETERS:
            deletes = True
        elif prog in _PERMS:
            perms = True
        else:
            best = higher(best, inv.ctx.nested(join(w for w in real if w != "{}"), "find -exec"))
    if deletes:
        best = higher(best, find_delete(inv, roots, filtered, "find -delete"))
    elif perms:
        for root in roots:
            cls = classify(root)
            if cls in _SWEEPING:
                level: RiskLevel = "high" if cls in ("root", "system_root") else "medium"
                why = f"find changes permissions under {WHERE[cls]} ({root})"
                best = higher(best, Finding(level, why, "system"))
    return best


def find_delete(inv: Invocation, roots: list[str], filtered: bool, verb: str) -> Finding:
    """Unfiltered: like rm -rf on each root. Filtered: only sweeping roots matter."""
    best = LOW
    for root in roots:
        if not filtered:
            found = judge_delete(root, recursive=True, force=True, ctx=inv.ctx, verb=verb)
            best = higher(best, found)
            continue
        if workspace_of(root, inv.ctx) == "outside":
            best = higher(best, outside_workspace(verb, "deletes files", root))
            continue
        cls = classify(root)
        if cls in _SWEEPING:
            level: RiskLevel = "high" if cls in ("root", "home_root", "system_root") else "medium"
            why = f"{verb} deletes matching files under {WHERE[cls]} ({root})"
            best = higher(best, Finding(level, why, "destructive"))
    return best
