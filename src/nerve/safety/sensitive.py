"""Files whose meaning is more than their bytes: what grants access, runs later, or is a secret.

Three lists, matched on a path after `~`, `$HOME` and `..` are resolved (paths.expand):

- persistence: shell start-up files, SSH's authorized_keys and config, cron, systemd units,
  launch agents, /etc/profile.d, ld.so.preload — writing there plants code that runs later, or
  lets someone in; git hooks run on every commit (medium: developers install them).
- secrets: private keys (`~/.ssh/id_*`, not `.pub`), cloud and cluster credentials, .netrc,
  /etc/shadow — reading one puts it in the agent's context, sending one leaks it. `.env` files
  are `medium`: reading them is ordinary development.
- system files: passwd, sudoers, hosts, sshd_config, fstab... — changing one can lock everyone
  out or break the machine.

To protect one more file, add a pattern to its list; every writer, reader and sender asks here.
"""

from __future__ import annotations

import posixpath
import re

from nerve.safety.paths import expand
from nerve.safety.verdict import RiskLevel

__all__ = [
    "history_file",
    "persistence_file",
    "secret_file",
    "system_binary",
    "system_file",
]

_HOME = r"(?:/home/[^/]+|/root|/Users/[^/]+)"
_PERSISTENCE = re.compile(
    rf"^{_HOME}/(?P<home>\.ssh/(?:authorized_keys2?|config|rc)|\.(?:bashrc|bash_profile|"
    r"bash_login|bash_logout|bash_aliases|profile|zshrc|zshenv|zprofile|zlogin|zlogout|kshrc|"
    r"cshrc|tcshrc|inputrc|xinitrc|xprofile|xsession|xsessionrc|vimrc|exrc|pam_environment)|"
    r"\.config/nvim/init\.(?:vim|lua)|\.config/fish/(?:conf\.d|functions)/.*|"
    r"\.config/fish/config\.fish|\.config/autostart/.*|\.config/systemd/user/.*|"
    r"Library/LaunchAgents/.*)$"
    r"|^/(?P<sys>etc/(?:profile|profile\.d/.*|bash\.bashrc|bashrc|zsh/\w+|environment|"
    r"cron[\w.]*(?:/.*)?|anacrontab|rc\.local|init\.d/.*|ld\.so\.preload|systemd/\S+\.(?:service|"
    r"timer|socket|path)|ssh/sshrc|update-motd\.d/.*|xdg/autostart/.*)|(?:usr/)?lib/systemd/"
    r"\S+\.(?:service|timer)|var/spool/cron/.*|Library/Launch(?:Agents|Daemons)/.*)$"
)
_HOOK = re.compile(r"(?:^|/)\.git/hooks/[^/]+$")
_SECRET = re.compile(
    rf"^{_HOME}/(?:\.ssh/(?!.*\.pub$)(?:id_[^/]+|[^/]*_(?:rsa|ed25519|ecdsa|dsa))|"
    r"\.aws/credentials|\.config/gcloud(?:/.*)?|\.kube/config|\.netrc|\.docker/config\.json|"
    r"\.git-credentials|\.pgpass|\.my\.cnf|\.gnupg(?:/.*)?|\.password-store(?:/.*)?|"
    r"\.vault-token|\.azure/\S+|\.config/gh/hosts\.yml|\.ssh|\.aws|\.npmrc|\.pypirc|\.s3cfg|"
    r"\.boto|\.gem/credentials|\.cargo/credentials(?:\.toml)?|\.terraform\.d/credentials\S*|"
    r"\.config/(?:hub|rclone/rclone\.conf|doctl/config\.yaml)|\.composer/auth\.json|\.oci/\S+|"
    r"\.databrickscfg|(?:\.cache/)?huggingface/token|\.local/share/keyrings(?:/.*)?|"
    r"Library/Keychains(?:/.*)?|\.mozilla/firefox/[^/]+/(?:logins\.json|key[34]\.db|"
    r"cookies\.sqlite)|(?:\.config|Library/Application Support)/(?:google-chrome|chromium|"
    r"Google/Chrome|BraveSoftware/[^/]+|microsoft-edge)/[^/]+/(?:Login Data|Cookies|Web Data))$"
    r"|^/etc/(?:g?shadow-?|sudoers|ssh/ssh_host_\w+_key|ssl/private(?:/.*)?)$"
    r"|^/proc/(?:self|\d+|\*|\$\$|\$\w+|\$\(…\))/environ$"
    r"|^/(?:var/)?run/secrets/.+$|^/home/[^/]+/\.(?:ssh|aws|gnupg)/\*$"
    r"|^/(?:var/lib|etc|opt|srv)/.*/secrets?/[^/]*(?i:passw|token|key|secret)[^/]*$"
    r"|(?:^|/)id_(?:rsa|ed25519|ecdsa|dsa)$"
)
# A template (.env.example) holds no secrets: reading or sending it is ordinary work.
_ENV_FILE = re.compile(r"(?:^|/)\.env(?:\.(?!(?:example|sample|template|dist)$)[\w-]+)?$")
# Shell and REPL histories: passwords typed on command lines end up there (medium: reading one
# is ordinary, sending one is not — netrules and exfil judge the sending).
_HISTORY = re.compile(
    r"(?:^|/)\.(?:bash|zsh|sh|python|psql|mysql|node_repl|sqlite|rediscli)_history$"
)
_SYSTEM = re.compile(
    r"^/etc/(?:passwd|group|g?shadow|sudoers(?:\.d(?:/.*)?)?|hosts|ssh/sshd_config(?:\.d/.*)?|"
    r"fstab|crypttab|pam\.d(?:/.*)?|security/.*|resolv\.conf|nsswitch\.conf|login\.defs|"
    r"default/grub|selinux/config|hostname|machine-id)$|^/boot(?:/.*)?$"
)


def _real(path: str) -> str | None:
    real = expand(path)
    if real is None or not real.startswith("/"):
        return real
    return posixpath.normpath(real)


def persistence_file(path: str) -> tuple[RiskLevel, str] | None:
    """(risk, what it is) when writing `path` plants something that runs later or grants access."""
    real = _real(path)
    if real is None:
        return None
    if real.startswith("/"):
        m = _PERSISTENCE.match(real)
        if m is not None:
            what = "an SSH access file" if "ssh" in real else "a start-up file"
            if "cron" in real:
                what = "a cron table"
            elif "systemd" in real or "Launch" in real or "init.d" in real:
                what = "a service definition"
            return "high", f"{what} ({path})"
    if real.endswith(("/authorized_keys", "/authorized_keys2")):  # sshd may look anywhere
        return "high", f"an SSH access file ({path})"
    if "hooks" in real and _HOOK.search(real):
        return "medium", f"a git hook, run on every commit ({path})"
    return None


def secret_file(path: str) -> tuple[RiskLevel, str] | None:
    """(risk, what it is) when `path` is a secret: a private key, credentials, password hashes."""
    real = _real(path)
    if real is None:
        return None
    if _SECRET.search(real):
        return "high", f"a secret ({path})"
    if ".env" in real and _ENV_FILE.search(real):
        return "medium", f"an environment file that may hold secrets ({path})"
    if "history" in real and _HISTORY.search(real):
        return "medium", f"a shell history that may hold secrets ({path})"
    return None


# Programs the system itself runs: anything in /bin or /sbin, and the core of /usr/bin.
_SYSTEM_BINARY = re.compile(
    r"^/s?bin/[^/]+$|^/usr/s?bin/(?:sh|bash|dash|zsh|ls|cat|ps|su|sudo|login|passwd|ssh|sshd|"
    r"top|netstat|ss|find|id|whoami|env|python3?|perl|chsh|chfn|newgrp|mount|crontab|systemctl)$"
)


def system_binary(path: str) -> bool:
    """Whether `path` is a program the system runs: replacing it plants code in every use."""
    real = _real(path)
    return real is not None and _SYSTEM_BINARY.match(real) is not None


def history_file(path: str) -> bool:
    """Whether `path` is a shell's or a REPL's history: deleting one hides what was run."""
    real = _real(path)
    return real is not None and "history" in real and _HISTORY.search(real) is not None


def system_file(path: str) -> str | None:
    """What `path` is when it is one of the files the operating system trusts for access or boot."""
    real = _real(path)
    if real is None or not real.startswith(("/etc/", "/boot")):
        return None
    return f"the system file {path}" if _SYSTEM.match(real) else None
