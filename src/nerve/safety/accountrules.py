"""Accounts and privilege: who may log in, and who is root.

`usermod -aG sudo bob`, `gpasswd -a bob wheel`, `adduser bob sudo` make an account an
administrator; `useradd -o -u 0 x` makes a second root; `passwd root`, `chpasswd` and `usermod
-p` set passwords, as `passwd bob` does for another account; `usermod -s /bin/bash nobody` lets
a service account log in (all `high`, system); `useradd bob` adds a login that outlives the
session (`high`, persistence). Adding a user to an ordinary group (`usermod -aG video bob`) or
changing one's own password interactively (`passwd`) passes. To guard one more group, add it
to _ADMIN_GROUPS.
"""

from __future__ import annotations

from nerve.safety.invocation import Invocation, flags_of, positionals
from nerve.safety.verdict import LOW, Finding, wordset

__all__ = ["ACCOUNT_RULES"]

# Groups that are root in all but name: sudo rights, or raw access to disks, sockets, logs.
_ADMIN_GROUPS = wordset("sudo wheel admin root adm docker lxd libvirt disk shadow staff")
_VALUE_OPTS = wordset("-g -G -s -d -u -c -e -f -k -l -p -K -R -P --groups --shell --home")


def _granted(why: str) -> Finding:
    return Finding("high", why, "system")


def _groups(value: str) -> set[str]:
    return set(value.split(",")) & _ADMIN_GROUPS


_VALUE_LETTERS = frozenset("gGsducefklpKRP")


def _unbundled(args: list[str]) -> list[str]:
    """`-ou 0` as `-o -u 0`, `-aG sudo` as `-a -G sudo`, `-u0` as `-u 0`."""
    out: list[str] = []
    for arg in args:
        if not arg.startswith("-") or arg.startswith("--") or len(arg) <= 2 or "=" in arg:
            out.append(arg)
            continue
        for j, letter in enumerate(arg[1:], 1):
            out.append("-" + letter)
            if letter in _VALUE_LETTERS and arg[j + 1 :]:
                out.append(arg[j + 1 :])
                break
    return out


def _usermod(inv: Invocation) -> Finding:
    args = _unbundled(inv.args)
    for i, arg in enumerate(args):
        value = args[i + 1] if i + 1 < len(args) else ""
        name = arg.split("=", 1)[0]
        if "=" in arg:
            value = arg.split("=", 1)[1]
        if (
            name in ("-G", "--groups", "-g", "--gid")
            or (name.startswith("-") and name.endswith("G") and not name.startswith("--"))
        ) and _groups(value):
            why = f"{inv.prog} adds an account to the {sorted(_groups(value))[0]} group"
            return _granted(why)
        if name in ("-u", "--uid") and value == "0":
            return _granted(f"{inv.prog} gives an account user id 0 (root)")
        if name in ("-o", "--non-unique") and "0" in args:
            return _granted(f"{inv.prog} creates a second account with root's user id")
        if name in ("-p", "--password"):
            return _granted(f"{inv.prog} sets an account's password")
    return LOW


def _gpasswd(inv: Invocation) -> Finding:
    pos = positionals(inv.args, wordset("-a -d -A -M --add --delete"))
    short, long = flags_of(inv.args)
    added = "a" in short or "M" in short or "A" in short or "--add" in long
    if added and pos and pos[-1] in _ADMIN_GROUPS:
        return _granted(f"gpasswd adds an account to the {pos[-1]} group")
    return LOW


def _adduser(inv: Invocation) -> Finding:
    pos = positionals(inv.args, _VALUE_OPTS)
    if len(pos) == 2 and pos[1] in _ADMIN_GROUPS:
        return _granted(f"{inv.prog} adds {pos[0]} to the {pos[1]} group")
    granted = _usermod(inv)
    if granted.blocks or len(pos) != 1 or "-D" in inv.args:  # -D: show or set the defaults
        return granted
    return Finding("high", f"{inv.prog} creates the login account {pos[0]}", "persistence")


def _passwd(inv: Invocation) -> Finding:
    if inv.prog == "chpasswd" or "--stdin" in inv.args:
        return _granted(f"{inv.prog} sets account passwords")
    short, long = flags_of(inv.args)
    pos = positionals(inv.args)
    if "S" in short or "--status" in long:  # shows the account's state; changes nothing
        return LOW
    if short & {"d", "u", "l"} or pos:
        return _granted("passwd changes another account's password or lock")
    return LOW


ACCOUNT_RULES = {
    "usermod": _usermod,
    "useradd": _adduser,
    "adduser": _adduser,
    "gpasswd": _gpasswd,
    "passwd": _passwd,
    "chpasswd": _passwd,
}
