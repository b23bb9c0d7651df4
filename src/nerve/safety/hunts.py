"""Secret hunts: searching a home or the whole system for credentials, by content or by name.

`grep -r password ~`, `rg -i 'api[_-]?key' /home`, `find / -name id_rsa`, `find ~ -name '*.pem'`
read nothing the agent was asked about: they sweep for secrets to print (`high`, credentials).
The same search in the workspace (`grep -r TODO .`, `find . -name '*.pem'`) is the user's
business and passes, as does a search for anything else (`grep -r main /etc`).
"""

from __future__ import annotations

import re

from nerve.safety.invocation import Invocation, flags_of
from nerve.safety.paths import classify
from nerve.safety.verdict import LOW, Finding, wordset

__all__ = ["find_hunt", "grep_hunt", "locate_hunt"]

_GREPS = wordset("grep egrep fgrep rg ag ack")
_ALWAYS_RECURSIVE = frozenset({"rg", "ag", "ack"})
# Words a pattern names when it looks for secrets in file contents.
_SECRET_WORDS = re.compile(
    r"passw(?:or)?d|passwd|\bpwd\b|secret|token|api[\W_]*key|apikey|private[\W_]*key|"
    r"aws_(?:secret|access)|credential|akia|begin\b.*private|bearer",
    re.IGNORECASE,
)
# File names a search by name looks for when it hunts keys and credential stores.
_SECRET_NAMES = re.compile(
    r"id_(?:rsa|dsa|ecdsa|ed25519)|\.pem\b|\.key\b|\.p12\b|\.pfx\b|\.kdbx?\b|\.keystore\b|"
    r"\.jks\b|\.ovpn\b|wallet\.dat|\.netrc|\.pgpass|\.git-credentials|credentials|\.env\b|"
    r"shadow|\.htpasswd|secrets?\b|\.gnupg|access_tokens|credentials\.db|\.vault-token",
    re.IGNORECASE,
)
# Where a sweep is not the user's workspace: the root, a whole home, a system directory. Not
# a path inside a home (/home/me/app is where projects live).
_SWEPT = frozenset({"root", "home_root", "system_root", "system", "top_level"})
_NAME_TESTS = wordset("-name -iname -path -ipath -wholename -iwholename -regex -iregex")


def _swept(path: str) -> bool:
    return path in ("~", "/") or classify(path) in _SWEPT


def _hunt(prog: str, what: str, where: str) -> Finding:
    return Finding("high", f"{prog} hunts for {what} under {where}", "credentials")


def grep_hunt(inv: Invocation) -> Finding:
    """grep -r (or rg, ag) for a secret word over a home or the system."""
    if inv.prog not in _GREPS:
        return LOW
    short, long = flags_of(inv.args)
    recursive = bool(short & {"r", "R"}) or bool(long & {"--recursive", "--dereference-recursive"})
    if not recursive and inv.prog not in _ALWAYS_RECURSIVE:
        return LOW
    words = [a for a in inv.args if not a.startswith("-")]
    patterns = [a.split("=", 1)[1] for a in inv.args if a.startswith(("--regexp=", "-e="))]
    patterns += [inv.args[i + 1] for i, a in enumerate(inv.args[:-1]) if a in ("-e", "--regexp")]
    if not patterns and words:
        patterns, words = words[:1], words[1:]
    if not any(_SECRET_WORDS.search(p) for p in patterns):
        return LOW
    for path in words:
        if _swept(path):
            return _hunt(inv.prog, "secrets", path)
    return LOW


def find_hunt(args: list[str], roots: list[str], prog: str = "find") -> Finding:
    """find / -name id_rsa: a search by name for keys and credential stores beyond the workspace."""
    swept = [r for r in roots if _swept(r)]
    if not swept:
        return LOW
    for i, arg in enumerate(args[:-1]):
        if arg in _NAME_TESTS and _SECRET_NAMES.search(args[i + 1]):
            return _hunt(prog, f"files named {args[i + 1]}", swept[0])
    return LOW


def locate_hunt(inv: Invocation) -> Finding:
    """`locate id_rsa`, `locate '*.pem'`: the file index searched for keys by name."""
    for name in [a for a in inv.args if not a.startswith("-")]:
        if _SECRET_NAMES.search(name):
            return _hunt(inv.prog, f"files named {name}", "the whole file index")
    return LOW
