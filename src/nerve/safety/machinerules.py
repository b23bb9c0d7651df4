"""The machine under the system: mounts, boot, the raw filesystem, containers, tracks left.

`mount -o remount,rw /`, `debugfs -w /dev/sda1`, `grub-install /dev/sda`, `efibootmgr -B`
rewrite what the system boots from or is protected by; `docker run -v /:/host`, `--privileged`
with the host's namespaces, and `nsenter -t 1` hand a container the host; `visudo` fed by a pipe
edits who may be root without an editor in the way (all `high`, system). `history -c`, `unset
HISTFILE`, `HISTFILE=/dev/null`, `set +o history` stop the shell from keeping what it ran
(`high`, system: an agent has no reason to hide its commands); `LD_PRELOAD=/tmp/x.so` loads a
library from a temporary or home path into every program started after it (`high`, code).
Reading (`mount`, `findmnt`, `docker run -v $PWD:/app`) passes. These are host rules
(hostrules.py): only blocking findings count, and the program's own rule still judges the rest.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import pairwise

from nerve.safety.invocation import Invocation, flags_of, positionals
from nerve.safety.paths import classify, is_block_device, is_os_critical
from nerve.safety.verdict import LOW, Finding

__all__ = ["MACHINE_RULES", "assigned"]

Rule = Callable[[Invocation], Finding]
_HISTORY_VARS = frozenset({"HISTFILE", "HISTSIZE", "HISTFILESIZE", "SAVEHIST"})
# A bind mount of the host's root or its most trusted parts into a container.
_HOST_MOUNT = re.compile(r"^(?:/|/etc|/root|/boot|/var/run/docker\.sock|/run/docker\.sock)/?:")
_MOUNT_SOURCE = re.compile(r"(?:^|,)(?:source|src)=(/|/etc|/root|/boot)/?(?:,|$)")


def _system(why: str) -> Finding:
    return Finding("high", why, "system")


def _mount(inv: Invocation) -> Finding:
    args = inv.args
    options = ",".join(args[i + 1] for i, a in enumerate(args[:-1]) if a == "-o")
    options += ",".join(a.split("=", 1)[1] for a in args if a.startswith("--options="))
    points = positionals(args, frozenset({"-o", "-t", "-L", "-U", "--options", "--types"}))
    critical = [p for p in points if p.rstrip("/") == "" or is_os_critical(p)]
    if (
        "remount" in options
        and critical
        and {"rw", "exec", "suid", "dev"} & set(options.split(","))
    ):
        return _system(f"mount remounts {critical[-1]} writable or executable")
    if ("--bind" in args or "bind" in options.split(",")) and critical:
        return _system(f"mount binds over {critical[-1]}")
    if (
        "remount" in options
        and "ro" in options.split(",")
        and "/" in [p.rstrip("/") or "/" for p in points]
    ):
        return _system("mount remounts / read-only: nothing on the machine can write")
    return LOW


def _umount(inv: Invocation) -> Finding:
    points = [p.rstrip("/") or "/" for p in positionals(inv.args, frozenset({"-t", "-O"}))]
    vital = [p for p in points if p in ("/", "/boot", "/usr", "/var", "/home", "/etc")]
    if vital or "-a" in inv.args or "--all" in inv.args:
        return _system(f"umount takes {vital[0] if vital else 'every filesystem'} away")
    return LOW


def _link_down(inv: Invocation) -> Finding:
    """`ip link set eth0 down`, `ifconfig eth0 down`, `nmcli networking off`: off the network."""
    args = inv.args
    ip_down = inv.prog == "ip" and "link" in args[:2] and "down" in args
    ifconfig_down = inv.prog == "ifconfig" and args[-1:] == ["down"] and args[:1] != ["lo"]
    nmcli_off = inv.prog == "nmcli" and args[:2] in (
        ["networking", "off"],
        ["radio", "off"],
        ["device", "disconnect"],
    )
    down = ip_down or ifconfig_down or nmcli_off
    if down:
        return _system(f"{inv.prog} takes a network interface down, cutting the machine off")
    return LOW


def _debugfs(inv: Invocation) -> Finding:
    short, long = flags_of(inv.args)
    if "w" in short or "--write" in long:
        return _system("debugfs -w writes the filesystem's blocks directly")
    return LOW


def _boot(inv: Invocation) -> Finding:
    short, _ = flags_of(inv.args)
    if inv.prog == "efibootmgr" and not short & {"B", "b", "o", "c", "n", "a", "A"}:
        return LOW  # lists the boot entries
    if inv.prog.startswith("grub") and not any(is_block_device(p) for p in inv.args):
        return LOW  # grub-install --help, grub-mkconfig -o FILE with no disk
    return _system(f"{inv.prog} rewrites what the machine boots")


def _visudo(inv: Invocation) -> Finding:
    if inv.upstream is not None or "EDITOR" in " ".join(inv.cmd.words):
        return _system("visudo is fed sudo rules without an editor")
    return LOW


def _container(inv: Invocation) -> Finding:
    args = inv.args
    if not args or args[0] not in ("run", "create", "exec"):
        return LOW
    for i, arg in enumerate(args):
        value = args[i + 1] if i + 1 < len(args) else ""
        if arg in ("-v", "--volume") and _HOST_MOUNT.match(value):
            return _system(f"{inv.prog} {args[0]} mounts the host's {value.split(':')[0]}")
        if arg.startswith("--volume=") and _HOST_MOUNT.match(arg.split("=", 1)[1]):
            return _system(f"{inv.prog} {args[0]} mounts the host's root filesystem")
        if arg == "--mount" and _MOUNT_SOURCE.search(value):
            return _system(f"{inv.prog} {args[0]} mounts the host's root filesystem")
    host_ns = any(a in ("--pid=host", "--net=host", "--network=host") for a in args)
    if "--privileged" in args and host_ns:
        return _system(f"{inv.prog} {args[0]} runs privileged in the host's namespaces")
    return LOW


def _nsenter(inv: Invocation) -> Finding:
    args = inv.args
    if any(a in ("-t1", "--target=1") for a in args) or any(
        a in ("-t", "--target") and n == "1" for a, n in pairwise(args)
    ):
        return _system("nsenter enters the namespaces of the host's init process")
    return LOW


def assigned(name: str, value: str) -> Finding:
    """`HISTFILE=/dev/null`, `HISTSIZE=0`: the shell stops keeping what it runs;
    `LD_PRELOAD=/tmp/x.so`: every program loads that library."""
    if name in ("LD_PRELOAD", "LD_AUDIT") and classify(value) in ("temp", "home", "home_root"):
        return Finding("high", f"{name} loads {value} into every program started", "code")
    if name in _HISTORY_VARS and value in ("", "0", "/dev/null"):
        return Finding("high", f"{name}={value or '(empty)'} stops the shell keeping its history",
                       "system")  # fmt: skip
    return LOW


def _history(inv: Invocation) -> Finding:
    args = inv.args
    if inv.prog == "history" and ("-c" in args or ("-w" in args and "/dev/null" in args)):
        return Finding("high", "history -c erases the shell's history", "system")
    if inv.prog == "history" and any(a.startswith("-d") for a in args):
        return Finding("high", "history -d deletes commands from the shell's history", "system")
    if inv.prog == "unset" and _HISTORY_VARS & set(args):
        return Finding("high", "unset HISTFILE stops the shell keeping its history", "system")
    if inv.prog == "set" and "+o" in args and "history" in args:
        return Finding("high", "set +o history stops the shell keeping its history", "system")
    if inv.prog == "export":
        for arg in args:
            name, eq, value = arg.partition("=")
            if eq and (found := assigned(name, value)).blocks:
                return found
    return LOW


MACHINE_RULES: dict[str, Rule] = {
    "mount": _mount,
    "umount": _umount,
    **dict.fromkeys(("ip", "ifconfig", "nmcli"), _link_down),
    "debugfs": _debugfs,
    **dict.fromkeys(("grub-install", "grub2-install", "efibootmgr"), _boot),
    "visudo": _visudo,
    **dict.fromkeys(("docker", "podman", "nerdctl"), _container),
    "nsenter": _nsenter,
    **dict.fromkeys(("history", "unset", "set", "export"), _history),
}
