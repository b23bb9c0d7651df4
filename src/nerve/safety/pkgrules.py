"""System package managers removing what the machine needs to boot, log in or be reached.

Removing a package is `medium` (clirules.py: it can be installed again), but not when the
package is the machine's own: `apt purge openssh-server` cuts off remote access, `yum remove
systemd`, `apt-get remove sudo`, `dnf erase kernel*`, `pacman -R glibc` leave a machine that no
longer boots or lets anyone in (`high`, system), and a package manager cannot reinstall itself
after `dpkg --purge apt`. To protect one more package, add its name (or a prefix ending in `*`)
to _VITAL.
"""

from __future__ import annotations

from collections.abc import Callable

from nerve.safety.invocation import Invocation, positionals
from nerve.safety.verdict import LOW, Finding, wordset

__all__ = ["PACKAGE_RULES"]

_VITAL = wordset(
    "openssh-server openssh ssh sshd systemd systemd-sysv init sysvinit upstart sudo bash "
    "coreutils util-linux libc6 libc-bin glibc musl base-files base-passwd login passwd "
    "shadow-utils pam libpam-modules libpam-runtime apt dpkg rpm yum dnf zypper pacman apk-tools "
    "python3 grub* grub2* linux-image* linux-generic* kernel* linux linux-lts shim* "
    "network-manager networkmanager netplan.io ifupdown iproute2 openssl ca-certificates "
    "firewalld ufw iptables nftables auditd apparmor selinux-policy* e2fsprogs mount procps "
    "busybox alpine-base cloud-init"
)
_PREFIXES = tuple(v[:-1] for v in _VITAL if v.endswith("*"))
# manager -> its removal subcommands (or options)
_REMOVES: dict[str, frozenset[str]] = {
    "apt": wordset("remove purge autoremove"),
    "apt-get": wordset("remove purge autoremove"),
    "aptitude": wordset("remove purge"),
    "yum": wordset("remove erase autoremove"),
    "dnf": wordset("remove erase autoremove"),
    "zypper": wordset("remove rm"),
    "apk": wordset("del"),
    "snap": wordset("remove"),
    "pacman": wordset("-R -Rs -Rns -Rdd -Rsc -Rn --remove"),
    "rpm": wordset("-e --erase"),
    "dpkg": wordset("-r -P --remove --purge"),
}

Rule = Callable[[Invocation], Finding]


def _vital(name: str) -> bool:
    base = name.split("=", 1)[0].split(":", 1)[0].rstrip("*").lower()
    return base in _VITAL or base.startswith(_PREFIXES)


def _removes_vital(inv: Invocation) -> Finding:
    verbs = _REMOVES[inv.prog]
    if not any(a in verbs for a in inv.args):
        return LOW
    for name in positionals(inv.args):
        if name not in verbs and _vital(name):
            why = f"{inv.prog} removes {name}, which the machine needs to boot, log in or update"
            return Finding("high", why, "system")
    return LOW


PACKAGE_RULES: dict[str, Rule] = dict.fromkeys(_REMOVES, _removes_vital)
