"""Shell rules for service tools whose danger is a flag, a piped admin command or a family verb.

DNS (`nsupdate` scripts that delete records, zone transfers), load balancers (`haproxy -st`, and
runtime commands piped into a control socket: `disable server`, `shutdown sessions`), SSH key
stores (`ssh-add -D`, `ssh-keygen -R`), backup repositories (`borg rdelete`, `recreate`,
`break-lock`, `rclone cleanup`), restores that drop what exists (`pg_restore --clean`) and
releases that cannot be taken back (`mvn deploy`, `gradle publish`, `twine upload`).
"""

from __future__ import annotations

import re

from nerve.safety.clirules import generic_cli
from nerve.safety.invocation import Invocation, flags_of, positionals
from nerve.safety.verdict import LOW, Finding, wordset
from nerve.safety.wrappers import echoed

__all__ = ["SERVICE_RULES", "SERVICE_WORDS"]

# Words the first pass (triggers.py) must notice so these rules run at all.
SERVICE_WORDS = wordset("axfr ixfr")  # program names come from SERVICE_RULES itself


def _fed_lines(inv: Invocation) -> list[str]:
    """The lines a command reads as its script: here-documents, here-strings, `echo ... |`
    (with printf-style \\n and \\r escapes read as line breaks)."""
    texts = [r.target for r in inv.cmd.redirects if r.op in ("<<", "<<-", "<<<")]
    piped = echoed(inv.upstream)
    if piped is not None:
        texts.append(piped)
    return [line for text in texts for line in _ESCAPED_BREAK.sub("\n", text).splitlines()]


_ESCAPED_BREAK = re.compile(r"\\[nr]")


def _nsupdate(inv: Invocation) -> Finding:
    lines = _fed_lines(inv)
    for line in lines:
        words = line.lower().split()
        if words[:1] in (["delete"], ["del"]) or words[:2] in (
            ["update", "delete"],
            ["update", "del"],
        ):
            return Finding("high", f"nsupdate deletes DNS records ({line.strip()[:60]})")
    what = "DNS changes" if lines else "DNS changes that are not visible here"
    return Finding("medium", f"nsupdate applies {what}")


def _zone_transfer(inv: Invocation) -> Finding:
    for arg in inv.args:
        low = arg.lower().removeprefix("-t")
        if low in ("axfr", "ixfr") or low.startswith("ixfr="):
            return Finding(
                "high", f"{inv.prog} requests a zone transfer, dumping every record of the zone"
            )
    return LOW


def _haproxy(inv: Invocation) -> Finding:
    if "-st" in inv.args:
        return Finding("high", "haproxy -st hard-stops the running proxy, cutting its connections")
    if "-sf" in inv.args:
        return Finding("medium", "haproxy -sf replaces the running proxy (graceful reload)")
    return LOW


# First words of runtime commands (HAProxy, memcached, Redis, ...) that take traffic or data away.
_ADMIN_STOPS = wordset("disable shutdown del delete drop kill stop flush_all flushall flushdb")


def _control_socket(inv: Invocation) -> Finding:
    """A runtime admin command written into a socket (`echo 'disable server x' | socat ...`)."""
    for line in _fed_lines(inv):
        words = line.lower().split()
        if not words:
            continue
        stops = words[0] in _ADMIN_STOPS
        drains = words[0] == "set" and bool({"maint", "drain"} & set(words) or words[-1] == "0")
        if stops or drains:
            sent = " ".join(words)[:60]
            why = "it stops traffic or deletes data"
            return Finding("high", f"{inv.prog} sends `{sent}` to a control socket: {why}")
    return LOW


def _ssh_keys(inv: Invocation) -> Finding:
    short, long = flags_of(inv.args)
    if inv.prog == "ssh-add" and ({"d", "D"} & short or "--delete" in long):
        return Finding("high", "ssh-add -d/-D removes identities from the SSH agent")
    if inv.prog == "ssh-keygen" and "R" in short:
        return Finding("high", "ssh-keygen -R deletes a host's keys from known_hosts")
    return LOW


# Verbs of backup-repository tools whose names do not say they destroy (delete, prune, forget
# and compact are caught by the generic rule).
_BACKUP_VERBS = {
    "rdelete": "deletes the whole repository",
    "recreate": "rewrites archives, dropping whatever the new options exclude",
    "cleanup": "permanently deletes trashed files and old versions",
    "break-lock": "breaks a lock another process may hold, risking a corrupt repository",
}


def _backup(inv: Invocation) -> Finding:
    pos = positionals(inv.args)
    verb = pos[0].lower() if pos else ""
    if verb in _BACKUP_VERBS:
        return Finding("high", f"{inv.prog} {verb} {_BACKUP_VERBS[verb]}")
    return generic_cli(inv)


_PG_RESTORE_VALUE_LETTERS = frozenset("dfFIjLnNPStTUhpe")


def _drops_first(inv: Invocation) -> bool:
    if "--clean" in inv.args or "--drop" in inv.args:
        return True
    for arg in inv.args if inv.prog == "pg_restore" else ():
        if arg.startswith("-") and not arg.startswith("--"):
            for letter in arg[1:]:  # -c, -vc; but in -Fc the c is -F's value
                if letter == "c":
                    return True
                if letter in _PG_RESTORE_VALUE_LETTERS:
                    break
    return False


def _restore(inv: Invocation) -> Finding:
    if _drops_first(inv):
        return Finding("high", f"{inv.prog} drops the existing objects before restoring")
    return LOW


_MAVEN_VALUE_OPTS = wordset("-f -s -P -pl -rf -T -gs -t -l -e --file --settings --projects")


def _release(inv: Invocation) -> Finding:
    """Publishing a release: a version, once uploaded, cannot be replaced."""
    prog = inv.prog
    if prog in ("mvn", "mvnw"):
        pos = positionals(inv.args, _MAVEN_VALUE_OPTS)
        goals = [p for p in pos if p == "deploy" or p.startswith(("deploy:", "release:perform"))]
    elif prog in ("gradle", "gradlew"):
        pos = positionals(inv.args)
        tasks = [p.rsplit(":", 1)[-1] for p in pos]
        goals = [t for t in tasks if t.startswith("publish") and not t.endswith("MavenLocal")]
    else:  # twine upload, gem push / yank
        pos = positionals(inv.args)
        goals = pos[:1] if pos[:1] in (["upload"], ["push"], ["yank"]) else []
    if goals:
        return Finding("high", f"{prog} {goals[0]} publishes a release that cannot be replaced")
    return generic_cli(inv)


SERVICE_RULES = {
    "nsupdate": _nsupdate,
    **dict.fromkeys(("dig", "host", "drill"), _zone_transfer),
    "haproxy": _haproxy,
    **dict.fromkeys(("socat", "nc", "ncat", "netcat"), _control_socket),
    **dict.fromkeys(("ssh-add", "ssh-keygen"), _ssh_keys),
    **dict.fromkeys(("borg", "borg2", "restic", "kopia", "duplicity", "rclone"), _backup),
    **dict.fromkeys(("pg_restore", "mongorestore"), _restore),
    **dict.fromkeys(("mvn", "mvnw", "gradle", "gradlew", "twine", "gem"), _release),
}
