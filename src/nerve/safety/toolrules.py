"""Shell rules for tools whose danger is in a subcommand: git, containers, clusters, IaC, services.

Each rule knows the tool's own grammar (global options, subcommands, which flags make an
operation lose work), so `git reset --soft` passes and `git reset --hard` does not.
"""

from __future__ import annotations

import re

from nerve.safety.gitrules import git
from nerve.safety.invocation import Invocation, flags_of, positionals, with_next
from nerve.safety.lexer import SUB
from nerve.safety.paths import classify
from nerve.safety.verdict import LOW, Finding, RiskLevel, wordset
from nerve.safety.wrappers import echoed, prog_of

_FETCHES = re.compile(r"\b(?:curl|wget|nc|ncat)\b|/dev/tcp/")

__all__ = ["SYSTEM_TOOLS", "TOOL_RULES"]

_DOCKER_VALUE_OPTS = frozenset({"-H", "--host", "--context", "-c", "--config", "-l", "--log-level"})
_DOCKER_EXEC_VALUE_OPTS = frozenset(
    {"-e", "--env", "-u", "--user", "-w", "--workdir", "--env-file", "--detach-keys"}
)
_PRUNABLE = frozenset({"system", "image", "container", "volume", "network", "builder", "buildx"})


def _docker(inv: Invocation) -> Finding:
    pos = positionals(inv.args, _DOCKER_VALUE_OPTS)
    if not pos:
        return LOW
    short, long = flags_of(inv.args)
    sub = pos[0]
    nxt = pos[1] if len(pos) > 1 else ""
    force = "f" in short or "--force" in long
    if sub == "compose" or inv.prog == "docker-compose":
        action = nxt if sub == "compose" else sub
        if action == "down" and ("v" in short or "--volumes" in long):
            return Finding("high", "docker compose down -v deletes the project's volumes")
        return LOW
    if "prune" in (sub, nxt) and (sub in _PRUNABLE or sub == "prune"):
        return Finding("high", f"{inv.prog} {sub} prune deletes every unused object")
    if sub == "volume" and nxt in ("rm", "remove"):
        return Finding("high", "docker volume rm deletes the data in volumes")
    if sub in ("rm", "rmi") or (sub in ("container", "image") and nxt in ("rm", "remove")):
        if force:
            return Finding(
                "high", f"{inv.prog} {sub} -f force-removes running containers or images"
            )
        if any(SUB in a for a in inv.args):
            return Finding("high", f"{inv.prog} {sub} removes everything a substitution lists")
        return LOW
    if sub in ("stop", "kill") or (sub == "container" and nxt in ("stop", "kill")):
        return Finding("medium", f"{inv.prog} {sub} stops running containers")
    if sub == "exec":
        rest = inv.args[inv.args.index("exec") + 1 :]
        i = 0
        while i < len(rest) and rest[i].startswith("-"):  # exec's options, then the container
            i += 2 if rest[i] in _DOCKER_EXEC_VALUE_OPTS else 1
        if len(rest) > i + 1:
            return inv.ctx.nested(" ".join(rest[i + 1 :]), "inside a container", remote=True)
    return LOW


_K8S_WIDE = frozenset(
    {"namespace", "namespaces", "ns", "all", "node", "nodes", "pv", "crd", "crds"}
)


def _kubectl(inv: Invocation) -> Finding:
    pos = positionals(inv.args, frozenset({"-n", "--namespace", "--context", "-l", "-f", "-o"}))
    if not pos:
        return LOW
    sub = pos[0]
    if sub == "delete":
        short, long = flags_of(inv.args)
        if set(pos[1:2]) & _K8S_WIDE or {"--all", "--all-namespaces"} & long or "A" in short:
            return Finding("critical", f"{inv.prog} delete removes whole namespaces or everything")
        return Finding("high", f"{inv.prog} delete removes cluster resources")
    if sub == "scale" and "--replicas=0" in inv.args and ("--all" in inv.args or "-A" in inv.args):
        return Finding("high", f"{inv.prog} scale --replicas=0 --all stops every workload")
    if sub in ("drain", "replace", "scale", "cordon", "taint"):
        return Finding("medium", f"{inv.prog} {sub} disrupts running workloads")
    if sub == "exec" and "--" in inv.args:
        cmd = inv.args[inv.args.index("--") + 1 :]
        return inv.ctx.nested(" ".join(cmd), "inside a pod", remote=True)
    return LOW


def _helm(inv: Invocation) -> Finding:
    pos = positionals(inv.args, frozenset({"-n", "--namespace", "--kube-context"}))
    if pos and pos[0] in ("uninstall", "delete", "del", "un"):
        return Finding("high", "helm uninstall removes a release and its resources")
    return LOW


def _iac(inv: Invocation) -> Finding:
    pos = positionals(inv.args)
    short, long = flags_of(inv.args)
    flags = {a.split("=", 1)[0].lower() for a in inv.args if a.startswith("-")}
    targeted = any(f.startswith(("-target", "--target")) for f in flags)
    if "destroy" in pos[:2] or ("apply" in pos[:2] and ({"-destroy", "--destroy"} & flags)):
        level: RiskLevel = "high" if targeted else "critical"
        return Finding(level, f"{inv.prog} destroy tears down managed infrastructure")
    if "force-unlock" in pos[:1]:
        return Finding("high", f"{inv.prog} force-unlock breaks a lock another run may hold")
    if pos[:1] == ["state"] and len(pos) > 1 and pos[1] in ("rm", "delete", "remove"):
        return Finding("high", f"{inv.prog} state rm drops resources from state")
    if "apply" in pos[:1] and ({"-auto-approve", "--auto-approve", "--yes", "-y"} & flags):
        return Finding("medium", f"{inv.prog} apply changes infrastructure without review")
    del short, long
    return LOW


_POWER = frozenset({"poweroff", "reboot", "halt", "kexec", "rescue", "emergency", "hibernate"})


def _systemctl(inv: Invocation) -> Finding:
    pos = positionals(inv.args, frozenset({"-H", "--host", "-M", "--machine", "-t", "--type"}))
    if not pos:
        return LOW
    if pos[0] in _POWER or (
        pos[0] == "isolate"
        and any("rescue" in p or "emergency" in p or "poweroff" in p for p in pos)
    ):
        return Finding("critical", f"systemctl {pos[0]} takes the machine down")
    if pos[0] in ("stop", "disable", "mask", "kill") and len(pos) > 1:
        return Finding("high", f"systemctl {pos[0]} stops a system service")
    if pos[0] in ("restart", "try-restart", "reload-or-restart"):
        return Finding("medium", "systemctl restart interrupts a service")
    return LOW


def _service(inv: Invocation) -> Finding:
    pos = positionals(inv.args)
    if len(pos) > 1 and pos[1] in ("stop", "disable", "kill"):
        return Finding("high", f"service {pos[0]} {pos[1]} stops a system service")
    if len(pos) > 1 and pos[1] == "restart":
        return Finding("medium", "service restart interrupts a service")
    return LOW


def _power(inv: Invocation) -> Finding:
    if inv.prog == "shutdown" and ("-c" in inv.args or "--cancel" in inv.args):
        return LOW
    runlevels = set(positionals(inv.args))
    if inv.prog in ("init", "telinit") and not runlevels & {"0", "6", "1", "s", "S"}:
        return LOW
    return Finding("critical", f"{inv.prog} shuts the machine down or restarts it")


def _kill(inv: Invocation) -> Finding:
    targets = positionals(inv.args, frozenset({"-s", "-n"}))
    if "-0" in inv.args or "0" in inv.args[:2]:
        return LOW  # signal 0 only checks that a process exists
    if inv.prog == "killall5" or {"-1", "1"} & set(targets) or "-1" in inv.args[1:]:
        return Finding("critical", "kill targets every process (or init)")
    names = positionals(inv.args, frozenset({"-u", "--user", "-s", "--signal", "-g", "-t"}))
    by_user = "-u" in inv.args or "--user" in inv.args
    if inv.prog in ("pkill", "killall") and by_user and not names:  # no name: all of them
        user = next((v for a, v in with_next(inv.args) if a in ("-u", "--user")), "")
        why = f"{inv.prog} -u {user} kills every process the account runs"
        return Finding("critical" if user in ("root", "0") else "high", why, "system")
    if inv.prog in ("pkill", "killall"):
        vital = [t for t in targets if t.lower().strip("^$") in _VITAL]
        if vital:  # what keeps the machine reachable, logged or defended
            why = f"{inv.prog} kills {vital[0]}, which keeps the machine reachable or watched"
            return Finding("high", why, "system")
        return Finding("medium", f"{inv.prog} kills processes by name")
    return LOW


_VITAL = wordset(
    "sshd init systemd dockerd containerd kubelet auditd rsyslogd syslog-ng journald "
    "systemd-journald falcon-sensor osqueryd wazuh-agent ossec clamd fail2ban-server crond cron"
)


def _crontab(inv: Invocation) -> Finding:
    short, _ = flags_of(inv.args)
    if "r" in short:
        return Finding("high", "crontab -r deletes every scheduled job")
    if short & {"l", "e"} or not (positionals(inv.args, frozenset({"-u"})) or inv.upstream):
        return LOW
    src, _ = prog_of(inv.upstream)
    if src in ("curl", "wget") or _FETCHES.search(echoed(inv.upstream) or ""):
        why = "crontab installs scheduled jobs that download and run code"
        return Finding("high", why, "persistence")
    staged = [p for p in positionals(inv.args, frozenset({"-u"})) if classify(p) == "temp"]
    if staged:
        why = f"crontab installs jobs from a world-writable temporary file ({staged[0]})"
        return Finding("high", why, "persistence")
    return Finding("medium", "crontab replaces the scheduled jobs", "persistence")


def _account(inv: Invocation) -> Finding:
    return Finding("high", f"{inv.prog} deletes an account")


def _nginx(inv: Invocation) -> Finding:
    if "-s" in inv.args and inv.args[inv.args.index("-s") + 1 :][:1] in (["stop"], ["quit"]):
        return Finding("high", "nginx -s stop shuts the web server down")
    return LOW


def _firewall(inv: Invocation) -> Finding:
    short, long = flags_of(inv.args)
    if "F" in short or "X" in short or "--flush" in long or "flush" in inv.args:
        return Finding("medium", f"{inv.prog} flushes firewall rules")
    return LOW


# Tools whose findings change the operating system, not data: their category is `system`.
SYSTEM_TOOLS = wordset(
    "systemctl service shutdown reboot halt poweroff init telinit kill killall pkill killall5 "
    "crontab userdel deluser groupdel delgroup nginx iptables ip6tables nft ufw"
)

TOOL_RULES = {
    "git": git,
    "docker": _docker,
    "podman": _docker,
    "nerdctl": _docker,
    "docker-compose": _docker,
    "kubectl": _kubectl,
    "oc": _kubectl,
    "helm": _helm,
    **dict.fromkeys(
        ("terraform", "tofu", "terragrunt", "pulumi", "cdk", "cdktf", "sls", "serverless"), _iac
    ),
    "systemctl": _systemctl,
    "service": _service,
    **dict.fromkeys(("shutdown", "reboot", "halt", "poweroff", "init", "telinit"), _power),
    **dict.fromkeys(("kill", "killall", "pkill", "killall5"), _kill),
    "crontab": _crontab,
    **dict.fromkeys(("userdel", "deluser", "groupdel", "delgroup"), _account),
    "nginx": _nginx,
    **dict.fromkeys(("iptables", "ip6tables", "nft", "ufw"), _firewall),
}
