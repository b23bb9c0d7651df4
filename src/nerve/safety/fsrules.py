"""Shell rules for files and disks: judged by effect (delete, overwrite, format) and target.

`rm -rf /tmp/x` and `rm -rf ./build` are routine; `rm -rf ~`, `rm -r /etc`, `find / -delete`,
`dd of=/dev/sda`, `mkfs /dev/sdb1`, `chmod -R 777 /` are not. Each target is judged by
targets.py: by class, against the workspace, and by what the file is (a start-up file, a key, a
system file). A recursive forced delete of a workspace path is `medium`: allowed, but blocked
in strict mode; outside a given workspace any delete, write, move or chmod is `high`.
"""

from __future__ import annotations

import re

from nerve.safety.findrules import fed_by_find, find, overwrites_each
from nerve.safety.invocation import Invocation, flags_of, positionals
from nerve.safety.lexer import SUB, Script
from nerve.safety.paths import classify, is_system_config
from nerve.safety.sensitive import history_file, system_file
from nerve.safety.targets import (
    WHERE,
    judge_delete,
    judge_read,
    judge_write,
    outside_workspace,
    workspace_of,
)
from nerve.safety.verdict import LOW, Category, Finding, RiskLevel, higher, wordset
from nerve.safety.wrappers import prog_of

__all__ = ["FS_RULES"]


def _rm(inv: Invocation) -> Finding:
    short, long = flags_of(inv.args)
    recursive = bool(short & {"r", "R"}) or "--recursive" in long
    force = "f" in short or "--force" in long
    if "--no-preserve-root" in long:
        why = "rm --no-preserve-root disables rm's protection of /"
        return Finding("critical", why, "destructive")
    targets = positionals(inv.args)
    if not targets and inv.from_xargs and inv.upstream and inv.upstream.words:
        words = inv.upstream.words
        fed = fed_by_find(inv, "find | xargs rm")  # judged like find -delete
        if fed is not None:
            return fed
        if words[0] in ("echo", "printf"):
            targets = [part for word in words[1:] for part in word.split()]
        elif words[0] == "ls":  # `ls ~ | xargs rm -rf` deletes what `rm -rf ~/*` would
            listed = [w for w in words[1:] if not w.startswith("-")] or ["."]
            targets = [w.rstrip("/") + "/*" for w in listed]
        elif recursive:
            return Finding("medium", "rm -r deletes paths read from a pipe", "destructive")
    if not targets:
        if recursive and force:
            return Finding("medium", "rm -r with no explicit target", "destructive")
        return LOW
    if recursive and any(SUB in t for t in targets) and _decodes(inv.cmd.subs):
        return Finding("high", "rm -r deletes a path hidden by encoding, decoded at run time")
    best = LOW
    for target in targets:
        found = judge_delete(target, recursive=recursive, force=force, ctx=inv.ctx, verb="rm")
        best = higher(best, found)
    return best


def _decodes(scripts: list[Script]) -> bool:
    """A substitution that decodes its text (base64 -d, xxd -r, rev): what it prints is hidden."""
    for script in scripts:
        for pipeline in script:
            for cmd in pipeline.commands:
                prog, args = prog_of(cmd)
                if prog == "rev" or (
                    prog in ("base64", "base32", "xxd", "openssl")
                    and {"-d", "--decode", "-D", "-r", "-revert"} & set(args)
                ):
                    return True
    return False


_DEVICE_TOOLS = wordset(
    "mkfs mke2fs mkswap mkdosfs mkntfs wipefs fdisk sfdisk gdisk sgdisk cfdisk parted "
    "blkdiscard badblocks cryptsetup zpool"
)


def _disk_tool(inv: Invocation) -> Finding:
    for arg in positionals(inv.args) + [a.split("=", 1)[-1] for a in inv.args if "=" in a]:
        if classify(arg) == "device":
            why = f"{inv.prog} writes to the disk device {arg}"
            return Finding("critical", why, "destructive")
    if inv.prog.startswith(("mkfs", "wipefs", "mke2fs")):
        return Finding("medium", f"{inv.prog} formats or repartitions storage", "destructive")
    return LOW


_MDADM_WIPES = frozenset({"--zero-superblock", "--create", "-C", "--remove", "--fail", "--grow"})


def _repair(inv: Invocation) -> Finding:
    """`mdadm --zero-superblock /dev/sda` erases a RAID member; `xfs_repair -L` drops the log."""
    if inv.prog == "mdadm" and _MDADM_WIPES & set(inv.args):
        return _disk_tool(inv)
    if inv.prog == "xfs_repair" and "-L" in inv.args:
        why = "xfs_repair -L zeroes the filesystem log, losing the changes in it"
        return Finding("high", why, "destructive")
    return LOW


def _dd(inv: Invocation) -> Finding:
    best = LOW
    for arg in inv.args:
        if arg.startswith("if="):
            best = higher(best, judge_read(arg[3:], "dd"))
        if arg.startswith("of="):
            cls = classify(arg[3:])
            if cls == "device":
                why = f"dd overwrites the disk device {arg[3:]}"
                return Finding("critical", why, "destructive")
            if cls in ("system", "system_root", "root"):
                why = f"dd overwrites {WHERE[cls]} ({arg[3:]})"
                return Finding("high", why, "system")
            best = higher(best, judge_write(arg[3:], inv.ctx, "dd", action="overwrites"))
    return best


def _shred(inv: Invocation) -> Finding:
    best = LOW
    for target in positionals(inv.args, frozenset({"-n", "-s", "--iterations", "--size"})):
        cls = classify(target)
        if cls == "device":
            why = f"shred destroys the disk device {target}"
            return Finding("critical", why, "destructive")
        ws = workspace_of(target, inv.ctx)
        if ws == "outside" or history_file(target):
            best = higher(best, judge_write(target, inv.ctx, "shred", action="destroys"))
            continue
        level: RiskLevel = (
            "high" if cls in ("system", "system_root", "root", "home_root") else "medium"
        )
        why = f"shred irrecoverably destroys {WHERE[cls]} ({target})"
        best = higher(best, Finding(level, why, "destructive"))
    return best


_OPEN_MODES = re.compile(r"^(?:0?[0-7]?7[0-7][67]|[ugoa]*[+=]r?w)")


def _perms(inv: Invocation) -> Finding:
    short, long = flags_of(inv.args)
    recursive = "R" in short or "--recursive" in long
    targets = positionals(inv.args, frozenset({"--reference", "--from"}))
    mode = ""
    if inv.prog != "chattr" and targets:
        mode, targets = targets[0], targets[1:]  # the mode or owner
    opens = inv.prog == "chmod" and bool(_OPEN_MODES.match(mode))
    best = LOW
    for target in targets:
        cls = classify(target)
        ws = workspace_of(target, inv.ctx)
        if cls == "root" or (recursive and cls in ("home_root", "system_root")):
            level: RiskLevel = "critical" if cls == "root" and recursive else "high"
            why = f"{inv.prog} changes {WHERE[cls]} ({target})"
            best = higher(best, Finding(level, why, "system"))
        elif ws == "inside":
            continue
        elif system_file(target) is not None or (opens and cls in ("system", "system_root")):
            why = f"{inv.prog} {mode} changes who may use {system_file(target) or target}"
            best = higher(best, Finding("high", why, "system"))
        elif ws == "outside":
            best = higher(best, outside_workspace(inv.prog, "changes", target))
        elif cls in ("system", "system_root"):
            level = "high" if recursive else "medium"
            why = f"{inv.prog} changes {WHERE[cls]} ({target})"
            best = higher(best, Finding(level, why, "system"))
        elif recursive and cls in ("top_level", "home"):
            why = f"{inv.prog} -R changes {WHERE[cls]} ({target})"
            best = higher(best, Finding("medium", why, "system"))
    return best


def _move(inv: Invocation) -> Finding:
    paths = positionals(inv.args, frozenset({"-t", "--target-directory", "-S", "--suffix"}))
    if len(paths) < 2:
        return LOW
    *sources, dest = paths
    if dest in ("/dev/null", "/dev/zero"):
        why = f"{inv.prog} sends files to {dest}, destroying them"
        return Finding("high", why, "destructive")
    if overwrites_each(inv.prog, sources) and inv.prog == "cp":
        return _emptied(dest, inv, "cp /dev/null")
    best = judge_write(dest, inv.ctx, inv.prog)
    for src in sources:
        if inv.prog != "mv":
            best = higher(best, judge_read(src, inv.prog))
            continue
        cls = classify(src)
        if cls in ("root", "home_root", "system_root"):
            why = f"mv moves {WHERE[cls]} ({src}) away"
            best = higher(best, Finding("high", why, "destructive"))
        else:
            best = higher(best, judge_write(src, inv.ctx, "mv", action="moves away"))
    cls = classify(dest)
    if cls in ("system", "system_root") and workspace_of(dest, inv.ctx) != "inside":
        why = f"{inv.prog} writes into {WHERE[cls]} ({dest})"
        best = higher(best, Finding("medium", why, "system"))
    return best


def _emptied(target: str, inv: Invocation, verb: str) -> Finding:
    """`cp /dev/null FILE`, `tee FILE < /dev/null`: FILE is emptied, as `> FILE` would."""
    cls = classify(target)
    if cls in ("system", "system_root", "device") and workspace_of(target, inv.ctx) != "inside":
        why = f"{verb} empties {WHERE[cls]} ({target})"
        return Finding("high", why, "system" if cls != "device" else "destructive")
    return judge_write(target, inv.ctx, verb, action="empties")


def _empty_input(inv: Invocation) -> bool:
    if any(r.op == "<" and r.target in ("/dev/null", "/dev/zero") for r in inv.cmd.redirects):
        return True
    src, args = prog_of(inv.upstream)
    return src in ("true", ":", "cat") and (src != "cat" or args[:1] == ["/dev/null"])


def _tee(inv: Invocation) -> Finding:
    short, long = flags_of(inv.args)
    append = "a" in short or "--append" in long
    if not append and _empty_input(inv):
        best = LOW
        for target in positionals(inv.args):
            best = higher(best, _emptied(target, inv, "tee"))
        return best
    best = LOW
    for target in positionals(inv.args):
        cls = classify(target)
        best = higher(best, judge_write(target, inv.ctx, "tee", append=append))
        if cls in ("system", "system_root", "device"):
            level: RiskLevel = "critical" if cls == "device" else "medium"
            if level == "medium" and is_system_config(target):
                level = "high"  # `| sudo tee -a /etc/apt/sources.list`: the system's own config
            why = f"tee writes into {WHERE[cls]} ({target})"
            category: Category = "destructive" if level == "critical" else "system"
            best = higher(best, Finding(level, why, category))
    return best


def _truncate(inv: Invocation) -> Finding:
    best = LOW
    if not positionals(inv.args, frozenset({"-s", "--size", "-r", "--reference"})):
        return fed_by_find(inv, "find | xargs truncate", "empties") or LOW
    for target in positionals(inv.args, frozenset({"-s", "--size", "-r", "--reference"})):
        cls = classify(target)
        if cls in ("system", "system_root", "device"):
            why = f"truncate empties {WHERE[cls]} ({target})"
            return Finding("high", why, "destructive")
        best = higher(best, judge_write(target, inv.ctx, "truncate", action="empties"))
    return best


def _link(inv: Invocation) -> Finding:
    """`ln -sf SRC DEST` replaces DEST with a link: judged as a write of DEST."""
    paths = positionals(inv.args, frozenset({"-t", "--target-directory", "-S", "--suffix"}))
    if len(paths) < 2:
        return LOW
    dest = paths[-1]
    best = judge_write(dest, inv.ctx, "ln", action="replaces")
    cls = classify(dest)
    if cls in ("system", "system_root") and workspace_of(dest, inv.ctx) != "inside":
        why = f"ln links into {WHERE[cls]} ({dest})"
        best = higher(best, Finding("medium", why, "system"))
    return best


def _volume(inv: Invocation) -> Finding:
    """LVM: `lvremove vg/lv`, `vgremove vg`, `pvremove /dev/sdb`, `lvreduce`: the data goes."""
    found = _disk_tool(inv)
    if found.blocks or not positionals(inv.args, frozenset({"-L", "--size", "-l"})):
        return found
    return Finding("high", f"{inv.prog} destroys a volume and its data", "destructive")


def _unlink(inv: Invocation) -> Finding:
    best = LOW
    for target in positionals(inv.args):
        found = judge_delete(target, recursive=False, force=True, ctx=inv.ctx, verb=inv.prog)
        best = higher(best, found)
    return best


_SED_VALUE_OPTS = frozenset({"-e", "--expression", "-f", "--file", "-l", "--line-length"})


def sed_in_place(inv: Invocation) -> Finding:
    """`sed -i EXPR FILE...` rewrites each FILE: judged as a write."""
    args = inv.args
    if not any(a.startswith("-i") or a.startswith("--in-place") for a in args):
        return LOW
    files = positionals(args, _SED_VALUE_OPTS)
    if not any(a in ("-e", "--expression", "-f", "--file") for a in args):
        files = files[1:]  # the first positional is the script
    if not files:
        return fed_by_find(inv, "find | xargs sed -i", "rewrites") or LOW
    best = LOW
    for target in files:
        best = higher(best, judge_write(target, inv.ctx, "sed -i", action="rewrites"))
        if best.blocks:
            break
    return best


FS_RULES = {
    "rm": _rm,
    "srm": _rm,
    "find": find,
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
    "ln": _link,
    **dict.fromkeys(("lvremove", "vgremove", "pvremove", "lvreduce"), _volume),
    **dict.fromkeys(_DEVICE_TOOLS, _disk_tool),
    **dict.fromkeys(("mdadm", "xfs_repair"), _repair),
}
