"""Host-level tools judged before the generic rules: kernel, firewall, audit, schedulers.

`sysctl -w`, `insmod`, `rmmod`, `modprobe -r`, `iptables -F`, `ufw disable`, `setenforce 0`
and `auditctl -D` change or blind the running kernel and its defences (`high`, system).
`systemctl --user enable`, `launchctl load`, `update-rc.d X defaults`, `chkconfig X on`,
`systemd-run --on-calendar`, `at -f FILE` and `crontab -` fed by a pipe plant jobs that run
later (`high`, persistence). Password crackers and credential dumpers (`john`, `hashcat`,
`unshadow`, `mimikatz`, `lazagne`) and mail with a secret attached (`mail -a ~/.ssh/id_rsa`)
are `high` credentials/exfiltration. Reading (`sysctl -a`, `iptables -L`, `launchctl list`,
`crontab -l`) passes. Each rule here runs before the program's own rule and only its blocking
findings count (shell.py), so a rule elsewhere still judges what these let through. Options
that run a command (optexec.py) and removals of the packages a machine needs (pkgrules.py) are
host rules too.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from nerve.safety.hunts import locate_hunt
from nerve.safety.invocation import Invocation, flags_of, positionals
from nerve.safety.machinerules import MACHINE_RULES
from nerve.safety.optexec import OPTION_RULES
from nerve.safety.paths import is_os_critical
from nerve.safety.pkgrules import PACKAGE_RULES
from nerve.safety.secretrules import secret_refs
from nerve.safety.sensitive import secret_file, system_file
from nerve.safety.verdict import LOW, Finding, wordset

__all__ = ["HOST_RULES"]

Rule = Callable[[Invocation], Finding]


def _first(rule: Rule, then: Rule) -> Rule:
    def both(inv: Invocation) -> Finding:
        found = rule(inv)
        return found if found.blocks else then(inv)

    return both


def _system(why: str) -> Finding:
    return Finding("high", why, "system")


def _planted(why: str) -> Finding:
    return Finding("high", why, "persistence")


def _sysctl(inv: Invocation) -> Finding:
    short, long = flags_of(inv.args)
    if "w" in short or "--write" in long or any("=" in p for p in positionals(inv.args)):
        return _system("sysctl -w changes a kernel parameter of the running system")
    return LOW


def _modules(inv: Invocation) -> Finding:
    short, long = flags_of(inv.args)
    if inv.prog == "insmod" and positionals(inv.args):
        return _system("insmod loads a kernel module into the running kernel")
    if inv.prog == "rmmod" and positionals(inv.args):
        return _system("rmmod unloads a kernel module")
    if inv.prog == "modprobe" and ("r" in short or "--remove" in long):
        return _system("modprobe -r unloads a kernel module")
    return LOW


def _firewall(inv: Invocation) -> Finding:
    args = inv.args
    short, long = flags_of(args)
    if inv.prog == "ufw":
        if positionals(args)[:1] in (["disable"], ["reset"]):
            return _system(f"ufw {positionals(args)[0]} turns the firewall off")
        return LOW
    if inv.prog == "nft":
        if "flush" in args or "delete" in args:
            return _system("nft flushes or deletes firewall rules")
        return LOW
    if "F" in short or "X" in short or "--flush" in long:
        return _system(f"{inv.prog} flushes the firewall rules")
    if ("P" in short or "--policy" in long) and "ACCEPT" in args:
        return _system(f"{inv.prog} -P ACCEPT opens the firewall")
    policy = "P" in short or "--policy" in long
    if policy and {"DROP", "REJECT"} & set(args) and {"INPUT", "OUTPUT"} & set(args):
        return _system(f"{inv.prog} -P DROP cuts the machine off the network")  # ssh too
    return LOW


def _defences(inv: Invocation) -> Finding:
    pos = positionals(inv.args)
    if inv.prog == "setenforce" and pos[:1] in (["0"], ["permissive"], ["Permissive"]):
        return _system("setenforce 0 turns SELinux enforcement off")
    if inv.prog == "auditctl" and ("-D" in inv.args or inv.args[-2:] == ["-e", "0"]):
        return _system("auditctl removes the audit rules or stops auditing")
    if inv.prog in ("aa-teardown", "aa-disable", "aa-complain"):
        return _system(f"{inv.prog} turns AppArmor protection off")
    return LOW


def _systemctl(inv: Invocation) -> Finding:
    pos = positionals(inv.args, frozenset({"-H", "--host", "-M", "--machine"}))
    if "--user" in inv.args and pos[:1] in (["enable"], ["link"], ["reenable"]):
        return _planted(f"systemctl --user {pos[0]} installs a service that starts at login")
    if pos[:1] in (["enable"], ["link"]) and any(p.startswith(("/tmp/", "/dev/shm/")) for p in pos):
        return _planted("systemctl enables a unit file from a temporary directory")
    return LOW


def _launchctl(inv: Invocation) -> Finding:
    pos = positionals(inv.args)
    if pos[:1] in (["load"], ["bootstrap"], ["enable"], ["submit"]):
        return _planted(f"launchctl {pos[0]} installs a job that runs at login or boot")
    return LOW


def _rc_links(inv: Invocation) -> Finding:
    pos = positionals(inv.args)
    verbs = {"defaults", "enable", "on", "--add", "add"}
    if set(pos[1:]) & verbs or "--add" in inv.args:
        return _planted(f"{inv.prog} makes a service start at boot")
    return LOW


def _systemd_run(inv: Invocation) -> Finding:
    if any(a.startswith(("--on-", "--timer-property")) for a in inv.args):
        return _planted("systemd-run installs a timer that runs a command later")
    return LOW


def _at(inv: Invocation) -> Finding:
    redirected = any(r.op == "<" for r in inv.cmd.redirects)
    if "-f" in inv.args or redirected or (inv.upstream is not None and inv.upstream.words):
        return _planted(f"{inv.prog} schedules commands to run later")
    return LOW


_STAGED = re.compile(r"/tmp/|/dev/shm|/var/tmp|@reboot|/dev/tcp|\bnc\b|base64|\|\s*(?:ba)?sh\b")


def _crontab(inv: Invocation) -> Finding:
    short, _ = flags_of(inv.args)
    if short & {"l"}:
        return LOW
    pos = positionals(inv.args, frozenset({"-u"}))
    piped = pos[:1] == ["-"] or "-" in inv.args or (inv.upstream is not None and not pos)
    if piped and inv.upstream is not None and _STAGED.search(" ".join(inv.upstream.words)):
        return _planted("crontab installs jobs that run staged or network code")
    if "e" in short:
        return Finding("medium", "crontab -e edits the scheduled jobs", "persistence")
    return LOW


_CRACKERS = wordset("john hashcat unshadow")
_DUMPERS = wordset(
    "mimikatz lazagne pypykatz mimipenguin secretsdump.py impacket-secretsdump laZagne.py"
)


def _cracker(inv: Invocation) -> Finding:
    if inv.prog in _DUMPERS:
        return Finding("high", f"{inv.prog} dumps stored credentials", "credentials")
    if inv.prog.startswith("python"):  # `python2 laZagne.py all`: the dumper is the script
        script = next((a for a in inv.args if not a.startswith("-")), "")
        if script.rsplit("/", 1)[-1] in _DUMPERS:
            return Finding("high", f"{script} dumps stored credentials", "credentials")
        return LOW
    for path in positionals(inv.args):
        if "shadow" in path or secret_file(path) is not None:
            why = f"{inv.prog} cracks the password hashes in {path}"
            return Finding("high", why, "credentials")
    return LOW


_ATTACH = frozenset({"-a", "-A", "--attach", "-attach"})


def _mail(inv: Invocation) -> Finding:
    args = inv.args
    bodies = [r.target for r in inv.cmd.redirects if r.op in ("<<", "<<-", "<<<")]
    if secret_refs(" ".join(bodies).split()):  # `sendmail x@evil <<EOF ... $API_KEY`
        why = f"{inv.prog} mails the secret ${secret_refs(' '.join(bodies).split())[0]}"
        return Finding("high", why, "exfiltration")
    for i, arg in enumerate(args):
        value = args[i + 1] if arg in _ATTACH and i + 1 < len(args) else ""
        if arg.startswith("--attach="):
            value = arg.split("=", 1)[1]
        if value and secret_file(value) is not None:
            why = f"{inv.prog} mails a secret ({value}) to another host"
            return Finding("high", why, "exfiltration")
    return LOW


def _cloud_copy(inv: Invocation) -> Finding:
    pos = positionals(inv.args, frozenset({"--profile", "--region", "-p"}))
    if inv.prog in ("aws", "gcloud") and pos[:1] in (["s3"], ["storage"]):
        pos = pos[1:]
    if pos[:1] not in (["cp"], ["mv"], ["sync"], ["copy"], ["copyto"], ["move"]):
        return LOW
    *sources, dest = pos[1:] or [""]
    if dest and ":" in dest:
        for src in sources:
            if secret_file(src) is not None or src.startswith(("/etc/", "/proc/")):
                why = f"{inv.prog} uploads {src} to remote storage ({dest})"
                return Finding("high", why, "exfiltration")
    return LOW


def _extract(inv: Invocation) -> Finding:
    args = inv.args
    short, long = flags_of(args)
    extracts = "x" in short or "--extract" in long
    extracts = extracts or bool(args and not args[0].startswith("-") and "x" in args[0])
    if inv.prog != "unzip" and not extracts:
        return LOW
    names = ("-C", "--directory") if inv.prog == "tar" else ("-d",)
    for i, arg in enumerate(args):
        value = args[i + 1] if arg in names and i + 1 < len(args) else ""
        if arg.startswith("--directory="):
            value = arg.split("=", 1)[1]
        if value and (value.rstrip("/") == "" or is_os_critical(value)):
            return _system(f"{inv.prog} unpacks files over the system ({value})")
    return LOW


_SETUID = re.compile(r"^(?:[ugoa]*\+[rwx]*s|0?[4267][0-7]{3})$")


def _chmod(inv: Invocation) -> Finding:
    pos = positionals(inv.args)
    if len(pos) > 1 and _SETUID.match(pos[0]):
        return _system(f"chmod {pos[0]} makes {pos[1]} run with its owner's (root's) rights")
    return LOW


def _in_place(inv: Invocation) -> Finding:
    if not any(a.startswith("-") and not a.startswith("--") and "i" in a for a in inv.args):
        return LOW
    code = {"-e", "-E", "-pe", "-pie", "-ne"}
    for i, arg in enumerate(inv.args):
        named = arg.startswith("/") and not (i and inv.args[i - 1] in code)
        if named and (system_file(arg) is not None or is_os_critical(arg)):
            return _system(f"{inv.prog} -i rewrites {arg}")
    return LOW


def _gpg(inv: Invocation) -> Finding:
    if any(a.startswith("--export-secret") for a in inv.args):
        return Finding("high", "gpg exports private keys", "credentials")
    return LOW


_METADATA = re.compile(
    r"169\.254\.169\.254/.*(?:security-credentials|identity|token)|169\.254\.170\.2/"
    r"|metadata\.google\.internal/.*token|/metadata/identity/oauth2/token"
)


def _metadata(inv: Invocation) -> Finding:
    if any(_METADATA.search(a) for a in inv.args):
        why = f"{inv.prog} fetches the machine's cloud credentials from the metadata service"
        return Finding("high", why, "credentials")
    return LOW


_CAPS = re.compile(
    r"cap_(?:setuid|setgid|sys_admin|sys_ptrace|dac_override|dac_read_search|"
    r"sys_module|chown|fowner)|^=?ep$|all",
    re.IGNORECASE,
)


def _setcap(inv: Invocation) -> Finding:
    if any(_CAPS.search(a) for a in positionals(inv.args)[:1]) and "-r" not in inv.args:
        return _system(f"setcap grants {inv.prog} root's powers to a program")
    return LOW


def _getent(inv: Invocation) -> Finding:
    if positionals(inv.args)[:1] in (["shadow"], ["gshadow"]):
        return Finding("high", f"getent {inv.args[-1]} prints password hashes", "credentials")
    return LOW


HOST_RULES: dict[str, Rule] = {
    "setcap": _setcap,
    **dict.fromkeys(("locate", "mlocate", "plocate"), locate_hunt),
    "getent": _getent,
    **dict.fromkeys(("aws", "gsutil", "gcloud", "rclone"), _cloud_copy),
    **dict.fromkeys(("tar", "unzip", "bsdtar"), _extract),
    "chmod": _chmod,
    **dict.fromkeys(("perl", "ruby"), _in_place),
    "gpg": _gpg,
    **dict.fromkeys(("curl", "wget", "http", "xh"), _metadata),
    "sysctl": _sysctl,
    **dict.fromkeys(("insmod", "rmmod", "modprobe"), _modules),
    **dict.fromkeys(("iptables", "ip6tables", "nft", "ufw"), _firewall),
    **dict.fromkeys(
        ("setenforce", "auditctl", "aa-teardown", "aa-disable", "aa-complain"), _defences
    ),
    "systemctl": _systemctl,
    "launchctl": _launchctl,
    **dict.fromkeys(("update-rc.d", "chkconfig", "rc-update"), _rc_links),
    "systemd-run": _systemd_run,
    **dict.fromkeys(("at", "batch"), _at),
    "crontab": _crontab,
    **dict.fromkeys(_CRACKERS | _DUMPERS | {"python", "python2", "python3"}, _cracker),
    **dict.fromkeys(("mail", "mailx", "mutt", "s-nail", "neomutt", "sendmail"), _mail),
    **MACHINE_RULES,
    **PACKAGE_RULES,
}
for _prog, _rule in OPTION_RULES.items():  # options that run a command come first
    HOST_RULES[_prog] = _first(_rule, HOST_RULES[_prog]) if _prog in HOST_RULES else _rule
