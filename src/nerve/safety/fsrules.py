"""Shell rules for files and disks: judged by effect (delete, overwrite, format) and target.

`rm -rf /tmp/x` and `rm -rf ./build` are routine; `rm -rf ~`, `rm -r /etc`, `find / -delete`,
`dd of=/dev/sda`, `mkfs /dev/sdb1`, `chmod -R 777 /` are not. A recursive forced delete inside the
workspace is `medium`: allowed, but blocked in strict mode.
"""

from __future__ import annotations

import re
from shlex import join

from nerve.safety.invocation import Invocation, flags_of, positionals
from nerve.safety.lexer import Redirect
from nerve.safety.paths import PathClass, classify
from nerve.safety.verdict import LOW, Finding, RiskLevel, higher, wordset

__all__ = ["FS_RULES", "judge_delete", "judge_redirects"]

_WHERE: dict[PathClass, str] = {
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


def judge_delete(path: str, *, recursive: bool, force: bool, remote: bool, verb: str) -> Finding:
    """How bad deleting `path` is; `verb` names the command for the reason."""
    if not recursive and not remote and path[:1].isalnum() and ".." not in path:
        return LOW  # one file or a glob inside the workspace
    cls = classify(path)
    where = f"{_WHERE[cls]} ({path})"
    if remote and recursive:  # nothing is known about the remote machine's layout
        return Finding("high", f"{verb} deletes recursively on a remote host: {where}")
    if cls == "temp":
        return LOW
    if cls in ("root", "home_root", "system_root"):
        if recursive:
            return Finding("critical", f"{verb} deletes {where} recursively")
        return Finding("high" if cls == "system_root" else "medium", f"{verb} targets {where}")
    if cls == "top_level":
        return Finding("high" if recursive else "medium", f"{verb} deletes {where}")
    if cls in ("system", "device"):
        return Finding("high", f"{verb} deletes {where}")
    if cls == "home":
        return Finding("high", f"{verb} deletes {where} recursively") if recursive else LOW
    if cls == "cwd_all":
        if recursive:
            return Finding("high", f"{verb} deletes {where}")
        return Finding("medium", f"{verb} deletes every file in {where}")
    if recursive and (force or cls == "unknown"):
        return Finding("medium", f"{verb} deletes {where} recursively")
    return LOW


def _rm(inv: Invocation) -> Finding:
    short, long = flags_of(inv.args)
    recursive = bool(short & {"r", "R"}) or "--recursive" in long
    force = "f" in short or "--force" in long
    if "--no-preserve-root" in long:
        return Finding("critical", "rm --no-preserve-root disables rm's protection of /")
    targets = positionals(inv.args)
    if not targets and inv.from_xargs and inv.upstream and inv.upstream.words:
        words = inv.upstream.words
        if words[0].rsplit("/", 1)[-1] == "find":  # find ... | xargs rm: judged like find -delete
            filtered = any(a in _FIND_FILTERS for a in words)
            return _find_delete(inv, _find_roots(words[1:]), filtered, "find | xargs rm")
        if words[0] in ("echo", "printf"):
            targets = [part for word in words[1:] for part in word.split()]
        elif recursive:
            return Finding("medium", "rm -r deletes paths read from a pipe")
    if not targets:
        return Finding("medium", "rm -r with no explicit target") if recursive and force else LOW
    best = LOW
    for target in targets:
        best = higher(
            best,
            judge_delete(
                target, recursive=recursive, force=force, remote=inv.ctx.remote, verb="rm"
            ),
        )
    return best


_FIND_FILTERS = wordset(
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -type -mtime -mmin "
    "-atime -amin -ctime -cmin -newer -size -user -group -empty -perm -links -inum -uid -gid "
    "-samefile -nouser -nogroup -lname -ilname -newermt -used"
)
_FIND_DELETERS = frozenset({"rm", "shred", "unlink", "srm"})
_FIND_PERMS = frozenset({"chmod", "chown", "chgrp"})


def _find_roots(args: list[str]) -> list[str]:
    roots: list[str] = []
    for arg in args:
        if arg.startswith(("-", "(", "!", ")")):
            break
        roots.append(arg)
    return roots or ["."]


def _find(inv: Invocation) -> Finding:
    args = inv.args
    roots = _find_roots(args)
    filtered = any(a in _FIND_FILTERS for a in args)
    deletes = "-delete" in args
    perms = False
    best = LOW
    for i, arg in enumerate(args):
        if arg not in ("-exec", "-execdir", "-ok", "-okdir") or i + 1 >= len(args):
            continue
        end = next((j for j in range(i + 1, len(args)) if args[j] in (";", "+")), len(args))
        words = args[i + 1 : end]
        prog = words[0].rsplit("/", 1)[-1]
        if prog in _FIND_DELETERS:
            deletes = True
        elif prog in _FIND_PERMS:
            perms = True
        else:
            best = higher(best, inv.ctx.nested(join(w for w in words if w != "{}"), "find -exec"))
    if deletes:
        best = higher(best, _find_delete(inv, roots, filtered, "find -delete"))
    elif perms:
        for root in roots:
            cls = classify(root)
            if cls in _SWEEPING:
                level: RiskLevel = "high" if cls in ("root", "system_root") else "medium"
                best = higher(
                    best, Finding(level, f"find changes permissions under {_WHERE[cls]} ({root})")
                )
    return best


_SWEEPING = frozenset({"root", "home_root", "system_root", "system"})


def _find_delete(inv: Invocation, roots: list[str], filtered: bool, verb: str) -> Finding:
    """Unfiltered: like rm -rf on each root. Filtered: only sweeping roots matter."""
    best = LOW
    for root in roots:
        if not filtered:
            best = higher(
                best,
                judge_delete(root, recursive=True, force=True, remote=inv.ctx.remote, verb=verb),
            )
            continue
        cls = classify(root)
        if cls in _SWEEPING:
            level: RiskLevel = "high" if cls in ("root", "home_root", "system_root") else "medium"
            best = higher(
                best, Finding(level, f"{verb} deletes matching files under {_WHERE[cls]} ({root})")
            )
    return best


_DEVICE_TOOLS = wordset(
    "mkfs mke2fs mkswap mkdosfs mkntfs wipefs fdisk sfdisk gdisk sgdisk cfdisk parted "
    "blkdiscard badblocks cryptsetup zpool"
)


def _disk_tool(inv: Invocation) -> Finding:
    for arg in positionals(inv.args) + [a.split("=", 1)[-1] for a in inv.args if "=" in a]:
        if classify(arg) == "device":
            return Finding("critical", f"{inv.prog} writes to the disk device {arg}")
    return (
        Finding("medium", f"{inv.prog} formats or repartitions storage")
        if inv.prog.startswith(("mkfs", "wipefs", "mke2fs"))
        else LOW
    )


def _dd(inv: Invocation) -> Finding:
    for arg in inv.args:
        if arg.startswith("of="):
            cls = classify(arg[3:])
            if cls == "device":
                return Finding("critical", f"dd overwrites the disk device {arg[3:]}")
            if cls in ("system", "system_root", "root"):
                return Finding("high", f"dd overwrites {_WHERE[cls]} ({arg[3:]})")
    return LOW


def _shred(inv: Invocation) -> Finding:
    best = LOW
    for target in positionals(inv.args, frozenset({"-n", "-s", "--iterations", "--size"})):
        cls = classify(target)
        if cls == "device":
            return Finding("critical", f"shred destroys the disk device {target}")
        level: RiskLevel = (
            "high" if cls in ("system", "system_root", "root", "home_root") else "medium"
        )
        best = higher(
            best, Finding(level, f"shred irrecoverably destroys {_WHERE[cls]} ({target})")
        )
    return best


_OPEN_MODES = re.compile(r"^(?:0?[0-7]?7[0-7][67]|[ugoa]*[+=]r?w)")


def _perms(inv: Invocation) -> Finding:
    short, long = flags_of(inv.args)
    recursive = "R" in short or "--recursive" in long
    targets = positionals(inv.args, frozenset({"--reference", "--from"}))
    if inv.prog != "chattr" and targets:
        targets = targets[1:]  # the mode or owner
    best = LOW
    for target in targets:
        cls = classify(target)
        if cls == "root" or (recursive and cls in ("home_root", "system_root")):
            level: RiskLevel = "critical" if cls == "root" and recursive else "high"
            best = higher(best, Finding(level, f"{inv.prog} changes {_WHERE[cls]} ({target})"))
        elif cls in ("system", "system_root"):
            level = "high" if recursive else "medium"
            best = higher(best, Finding(level, f"{inv.prog} changes {_WHERE[cls]} ({target})"))
        elif recursive and cls in ("top_level", "home"):
            best = higher(
                best, Finding("medium", f"{inv.prog} -R changes {_WHERE[cls]} ({target})")
            )
    return best


def _move(inv: Invocation) -> Finding:
    paths = positionals(inv.args, frozenset({"-t", "--target-directory", "-S", "--suffix"}))
    if len(paths) < 2:
        return LOW
    *sources, dest = paths
    if dest in ("/dev/null", "/dev/zero"):
        return Finding("high", f"{inv.prog} sends files to {dest}, destroying them")
    best = LOW
    if inv.prog == "mv":
        for src in sources:
            cls = classify(src)
            if cls in ("root", "home_root", "system_root"):
                best = higher(best, Finding("high", f"mv moves {_WHERE[cls]} ({src}) away"))
    cls = classify(dest)
    if cls in ("system", "system_root"):
        best = higher(best, Finding("medium", f"{inv.prog} writes into {_WHERE[cls]} ({dest})"))
    return best


def _tee(inv: Invocation) -> Finding:
    for target in positionals(inv.args):
        cls = classify(target)
        if cls in ("system", "system_root", "device"):
            level: RiskLevel = "critical" if cls == "device" else "medium"
            return Finding(level, f"tee writes into {_WHERE[cls]} ({target})")
    return LOW


def _truncate(inv: Invocation) -> Finding:
    for target in positionals(inv.args, frozenset({"-s", "--size", "-r", "--reference"})):
        cls = classify(target)
        if cls in ("system", "system_root", "device"):
            return Finding("high", f"truncate empties {_WHERE[cls]} ({target})")
    return LOW


def _unlink(inv: Invocation) -> Finding:
    best = LOW
    for target in positionals(inv.args):
        best = higher(
            best,
            judge_delete(target, recursive=False, force=True, remote=inv.ctx.remote, verb=inv.prog),
        )
    return best


_WRITE_OPS = frozenset({">", ">|", "&>", "<>", ">>", "&>>"})


def judge_redirects(redirects: list[Redirect]) -> Finding:
    """Output redirected onto a disk device or over a system file."""
    best = LOW
    for red in redirects:
        if red.op not in _WRITE_OPS:
            continue
        cls = classify(red.target)
        if cls == "device":
            return Finding(
                "critical", f"output is written straight onto the disk device {red.target}"
            )
        if cls in ("system", "system_root", "home_root"):
            level: RiskLevel = "medium" if red.op in (">>", "&>>") else "high"
            verb = "appends to" if level == "medium" else "overwrites"
            best = higher(
                best, Finding(level, f"a redirection {verb} {_WHERE[cls]} ({red.target})")
            )
    return best


FS_RULES = {
    "rm": _rm,
    "srm": _rm,
    "find": _find,
    "dd": _dd,
    "shred": _shred,
    "chmod": _perms,
    "chown": _perms,
    "chgrp": _perms,
    "chattr": _perms,
    "setfacl": _perms,
    "mv": _move,
    "cp": _move,
    "install": _move,
    "truncate": _truncate,
    "tee": _tee,
    "unlink": _unlink,
    **dict.fromkeys(_DEVICE_TOOLS, _disk_tool),
}
