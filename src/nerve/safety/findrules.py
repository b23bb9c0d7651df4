"""find: `-delete`, and the commands `-exec`, `-execdir`, `-ok` and `-okdir` run on each match.

Unfiltered, a delete is `rm -rf` of each starting point; filtered (`-name '*.pyc'`), only
sweeping starting points matter (/, ~, /etc). The command after `-exec` is unwrapped like any
other (`-exec sudo rm`, `-exec env X=1 rm`, `-exec busybox rm`) and anything but a deleter or a
permission change is judged as a nested command. Words inside an `-exec ... ;` are that
command's arguments: `find . -exec echo -delete \\;` prints, it does not delete.
"""

from __future__ import annotations

import re
from itertools import pairwise
from shlex import join, quote

from nerve.safety.hunts import find_hunt
from nerve.safety.invocation import Invocation
from nerve.safety.paths import classify, is_os_critical
from nerve.safety.targets import WHERE, judge_delete, judge_read, outside_workspace, workspace_of
from nerve.safety.verdict import LOW, Finding, RiskLevel, higher, wordset
from nerve.safety.wrappers import basename, unwrap

__all__ = ["EXEC_JUDGED", "FIND_FILTERS", "fed_by_find", "find", "find_delete", "find_roots"]

FIND_FILTERS = wordset(
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -type -mtime -mmin "
    "-atime -amin -ctime -cmin -newer -size -user -group -empty -perm -links -inum -uid -gid "
    "-samefile -nouser -nogroup -lname -ilname -newermt -used"
)
_EXECS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_DELETERS = frozenset({"rm", "shred", "unlink", "srm"})
_PERMS = frozenset({"chmod", "chown", "chgrp"})
_EDITORS = frozenset({"sed", "gsed", "perl"})
# Filters that pick files by name: `-name '*.pyc'` narrows a sweep, `-type f` or `-mtime +7` not.
_NAME_FILTERS = wordset("-name -iname -path -ipath -wholename -iwholename -regex -iregex -lname")
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash"})
# The shell's view of the file find hands it: `sh -c 'rm -rf "$1"' _ {}`, `"$@"`, `{}`.
_POS_REF = re.compile(r"\"?\$(?:\{?[01@*]\}?)\"?|\{\}")
_SWEEPING = frozenset({"root", "home_root", "system_root", "system"})
# Senders to an address named in the command (scp and rsync go to hosts the user configured).
_SENDERS = frozenset({"curl", "wget", "nc", "ncat", "socat", "ftp"})
_PRINTERS = frozenset({"cat", "head", "tail", "base64", "xxd", "strings", "od", "less", "more"})
# Programs `find -exec` judges by what they do to each file (the rest as nested commands).
EXEC_JUDGED = (
    _DELETERS | _PERMS | _EDITORS | _SENDERS | _PRINTERS | {"truncate", "tee", "cp", "mv", "dd"}
)


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


def _narrows(words: list[str]) -> bool:
    return any(a in FIND_FILTERS for a in words)


def _stand_in(root: str, own: list[str], filtered: bool) -> str:
    """What `{}` stands for in an -exec: the root itself (unfiltered), else a file under it,
    named as `-name` names it when that is a plain name (`-name authorized_keys`)."""
    if not filtered:
        return root
    names = [v for a, v in pairwise(own) if a in ("-name", "-iname")]
    under = root.rstrip("/") + "/match"
    if len(names) == 1 and not set(names[0]) & set("*?["):
        return f"{under}/{names[0]}"
    return under


def find(inv: Invocation) -> Finding:
    own, execs = _split(inv.args)
    roots = find_roots(own)
    filtered = _narrows(own)
    deletes = "-delete" in own
    perms = False
    best = LOW
    overwrites = ""
    for words in execs:
        real, _, nested = unwrap(words)
        if nested is not None:
            best = higher(best, inv.ctx.nested(nested, "find -exec"))
        if not real:
            continue
        prog = basename(real[0])
        if prog in _SHELLS:  # the code sees each match as $1 (or "$@", or {} spliced in)
            match = quote(_stand_in(roots[0], own, filtered))
            real = [_POS_REF.sub(match, w) for w in real]
        if prog in _SENDERS and any("{}" in w for w in real):
            why = f"find -exec {prog} sends every file it finds to another host"
            best = higher(best, Finding("high", why, "exfiltration"))
        elif prog in _PRINTERS and any(w == "{}" for w in real):  # each file, into the output
            for root in roots:
                best = higher(best, judge_read(root.rstrip("/") + "/", f"find -exec {prog}"))
                best = higher(best, judge_read(root, f"find -exec {prog}"))
        if prog in _DELETERS:
            deletes = True
        elif overwrites_each(prog, real[1:]):
            overwrites = prog if prog not in _EDITORS else overwrites or prog
        elif prog in _PERMS:
            perms = True
        else:
            best = higher(best, inv.ctx.nested(join(w for w in real if w != "{}"), "find -exec"))
    if deletes:
        best = higher(best, find_delete(inv, roots, filtered, "find -delete", named=_named(own)))
    elif overwrites in _EDITORS:  # an in-place edit: only the system's own files are off limits
        best = higher(best, find_edit(inv, roots, f"find -exec {overwrites} -i"))
    elif overwrites:
        verb = f"find -exec {overwrites}"
        best = higher(best, find_delete(inv, roots, filtered, verb, action="empties"))
    elif perms:
        for root in roots:
            cls = classify(root)
            if cls in _SWEEPING:
                level: RiskLevel = "high" if cls in ("root", "system_root") else "medium"
                why = f"find changes permissions under {WHERE[cls]} ({root})"
                best = higher(best, Finding(level, why, "system"))
    return best if best.blocks else higher(best, find_hunt(own, roots))


def overwrites_each(prog: str, args: list[str]) -> bool:
    """Whether `prog ARGS FILE` destroys FILE's contents: `sed -i`, `truncate`, `cp /dev/null`,
    `perl -pi`, `tee`, `dd of=`."""
    if prog in ("truncate", "tee", "shred"):
        return True
    if prog in ("cp", "mv", "install"):
        return any(a in ("/dev/null", "/dev/zero", "/dev/urandom") for a in args)
    if prog in ("sed", "perl", "gsed"):
        return any(a.startswith("-i") or a.startswith("--in-place") or a == "-pi" for a in args)
    return prog == "dd" and any(a.startswith("of=") for a in args)


def find_edit(inv: Invocation, roots: list[str], verb: str) -> Finding:
    """`sed -i` on every match: an edit, which developers run over their trees and homes; over
    the root or the system's own directories it rewrites the operating system's files."""
    best = LOW
    for root in roots:
        cls = classify(root)
        if workspace_of(root, inv.ctx) == "outside":
            best = higher(best, outside_workspace(verb, "rewrites files", root))
        elif cls in ("root", "system_root") or (cls == "system" and is_os_critical(root)):
            why = f"{verb} rewrites matching files under {WHERE[cls]} ({root})"
            best = higher(best, Finding("high", why, "system"))
        elif cls in ("home_root", "cwd_all", "system"):
            why = f"{verb} rewrites matching files under {WHERE[cls]} ({root})"
            best = higher(best, Finding("medium", why, "destructive"))
    return best


def fed_by_find(inv: Invocation, verb: str, action: str = "deletes") -> Finding | None:
    """`find ... | xargs CMD`: CMD acts on each file find prints, judged like find -exec CMD."""
    words = inv.upstream.words if inv.from_xargs and inv.upstream else []
    if not words or words[0].rsplit("/", 1)[-1] != "find":
        return None
    roots = find_roots(words[1:])
    if action == "rewrites":
        return find_edit(inv, roots, verb)
    return find_delete(inv, roots, _narrows(words), verb, action=action, named=_named(words))


def _named(words: list[str]) -> bool:
    return any(a in _NAME_FILTERS for a in words)


def find_delete(
    inv: Invocation,
    roots: list[str],
    filtered: bool,
    verb: str,
    action: str = "deletes",
    named: bool | None = None,
) -> Finding:
    """Unfiltered: like rm -rf on each root. Filtered: only sweeping roots matter."""
    best = LOW
    for root in roots:
        if not filtered:
            found = judge_delete(root, recursive=True, force=True, ctx=inv.ctx, verb=verb)
            best = higher(best, found)
            continue
        if workspace_of(root, inv.ctx) == "outside":
            best = higher(best, outside_workspace(verb, f"{action} files", root))
            continue
        cls = classify(root)
        if cls in _SWEEPING:
            level: RiskLevel = "high" if cls in ("root", "home_root", "system_root") else "medium"
            if cls == "system" and is_os_critical(root) and not named:
                level = "high"  # every file (-type f) of /var/lib, /usr/lib: the system itself
            why = f"{verb} {action} matching files under {WHERE[cls]} ({root})"
            best = higher(best, Finding(level, why, "destructive"))
    return best
