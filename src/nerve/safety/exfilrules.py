"""What a pipe carries off the machine, and channels that open it to another host.

A network client reading its standard input (`nc host 9`, `curl -T - URL`, `curl --data-binary
@- URL`, `socat - tcp:host:9`, `ssh host`) sends whatever the pipeline made: a database dump
(`mysqldump --all-databases | curl -T - ...`), an archive (`zip -r - . | curl ...`, `tar c ~ |
nc ...`), the environment (`env | nc ...`), a history, a secret or a system file (`cat
/etc/passwd | nc ...`). Each is `high` exfiltration; through ssh (a host the user configured)
an archive of ordinary files is `medium`.

Channels: `ssh -R` opens a port on another host into this machine, `xterm -display HOST:0`
hands a terminal to another host's X server (`critical`). Uploads of dump-like files (`.sql`,
archives, keys) or to file-drop services are judged in `upload_target`.
"""

from __future__ import annotations

import re

from nerve.safety.invocation import Invocation, positionals, with_next
from nerve.safety.lexer import Command
from nerve.safety.paths import classify
from nerve.safety.secretrules import secret_refs
from nerve.safety.sensitive import secret_file
from nerve.safety.verdict import LOW, Finding, RiskLevel, wordset
from nerve.safety.wrappers import prog_of

__all__ = ["CHANNEL_RULES", "piped_off", "upload_target"]

_SOCKETS = wordset("nc ncat netcat telnet socat openssl")
_DUMPS = wordset("mysqldump mariadb-dump pg_dump pg_dumpall mongodump mongoexport etcdctl")
_ARCHIVERS = wordset("tar zip 7z 7za cpio pax")
_READERS = wordset("cat tac head tail base64 base32 xxd od strings gzip bzip2 xz zcat less")
_STDIN_DATA = re.compile(r"^@-$|^@/dev/stdin$|=@-$|=<-$")
_DUMP_FILE = re.compile(
    r"\.(?:sql|dump|bak|sqlite3?|db|tar|tgz|tar\.\w+|zip|7z|rar|pem|key|p12|pfx|kdbx|jks)"
    r"(?:\.gz)?$",
    re.IGNORECASE,
)
_DROP_HOSTS = re.compile(
    r"(?:^|\.)(?:transfer\.sh|file\.io|0x0\.st|paste\.ee|pastebin\.com|termbin\.com|"
    r"webhook\.site|requestbin\.\w+|pipedream\.net|ngrok\.io|ngrok-free\.app|anonfiles\.com|"
    r"gofile\.io|catbox\.moe|bashupload\.com|oshi\.at|temp\.sh|ix\.io|sprunge\.us|"
    r"hastebin\.com|dpaste\.\w+|interact\.sh|oast\.\w+|burpcollaborator\.net)$",
    re.IGNORECASE,
)
_URL_HOST = re.compile(r"^(?:[a-z]+://)?(?:[^@/]*@)?(\[[0-9a-f:]+\]|[^/:?#]+)", re.IGNORECASE)
_IPV4 = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}$")
_LOCAL = ("127.", "0.0.0.0", "localhost")
_WHOLE = frozenset({"root", "home_root", "system_root"})


def _reads_stdin(prog: str, args: list[str]) -> bool:
    if prog in _SOCKETS:
        return prog != "openssl" or "s_client" in args
    if prog == "curl":
        return any(
            (_STDIN_DATA.search(a)) or (a in ("-T", "--upload-file") and n in ("-", "."))
            for a, n in with_next(args)
        ) or any(a.startswith(("-d@-", "-T-")) for a in args)
    if prog == "wget":
        return any(a.split("=", 1)[-1] in ("/dev/stdin", "-") for a in args if "post-file" in a)
    return prog == "ssh"


def _payload(cmd: Command) -> tuple[str, bool] | None:
    """What this command writes to its output, when it is worth stealing: (what, ordinary)."""
    prog, args = prog_of(cmd)
    if prog in _DUMPS:
        return f"a database dump ({prog})", False
    if prog in ("env", "printenv", "set", "history"):
        return "the environment" if prog != "history" else "the shell history", False
    if prog == "ps" and any(a[:1] != "-" and "e" in a for a in args):  # `ps auxe`
        return "every process's environment", False
    if prog in _ARCHIVERS or (prog == "git" and args[:1] in (["archive"], ["bundle"])):
        whole = [p for p in positionals(args) if p in ("~", "/") or classify(p) in _WHOLE]
        if whole:  # a whole home or the system is no ordinary archive, even to a known host
            return f"an archive of {whole[0]} made by {prog}", False
        return f"an archive made by {prog}", True
    if prog in ("echo", "printf") and secret_refs(args):
        return f"the secret ${secret_refs(args)[0]}", False
    if prog in _READERS:
        for path in positionals(args):
            if secret_file(path) is not None:
                return f"a secret ({path})", False
            if path.startswith(("/etc/", "/proc/", "/var/log/", "/root/")):
                return f"the system file {path}", False
    return None


def piped_off(pipeline: list[Command], i: int) -> Finding | None:
    """Command i of a pipeline sends its input to another host: judge what the input is."""
    prog, args = prog_of(pipeline[i])
    if not _reads_stdin(prog, args):
        return None
    for upstream in pipeline[:i]:
        found = _payload(upstream)
        if found is None:
            continue
        what, ordinary = found
        level: RiskLevel = "medium" if prog == "ssh" and (ordinary or "dump" in what) else "high"
        return Finding(level, f"{prog} sends {what} to another host", "exfiltration")
    return None


def _host(url: str) -> str:
    m = _URL_HOST.match(url)
    return m.group(1).lower() if m else ""


def upload_target(inv: Invocation, path: str) -> Finding | None:
    """An upload of `path` by curl or wget: to a file-drop service or a bare address, or of a
    file that is a dump, an archive or a key."""
    hosts = [
        _host(a)
        for a in positionals(inv.args)
        if "://" in a or (a != path and _IPV4.match(_host(a)))
    ]
    for host in hosts:
        if _DROP_HOSTS.search(host):
            why = f"{inv.prog} uploads {path} to a file-drop service ({host})"
            return Finding("high", why, "exfiltration")
    remote = [h for h in hosts if not h.startswith(_LOCAL)]
    if not remote:
        return None
    if any(_IPV4.match(h) for h in remote):
        why = f"{inv.prog} uploads {path} to a bare address ({remote[0]})"
        return Finding("high", why, "exfiltration")
    if _DUMP_FILE.search(path):
        why = f"{inv.prog} uploads {path}, a dump or archive, to {remote[0]}"
        return Finding("high", why, "exfiltration")
    return None


_REMOTE_FORWARD = re.compile(r"-[46AaCfGgKkMNnqsTtVvXxYy]*R.*")


_LOGIN_PORTS = (":22", ":3389", ":5900")  # ssh, remote desktop, VNC: a way in, not a service


def _ssh_tunnel(inv: Invocation) -> Finding:
    """`ssh -R`: high to a bare address (a host no ssh config names) or when the port it opens
    leads to this machine's login (ssh, RDP, VNC), else medium."""
    for arg, spec in with_next(inv.args):
        if _REMOTE_FORWARD.fullmatch(arg) or arg.lower().startswith("-oremoteforward"):
            bare = any(_IPV4.match(a.rsplit("@", 1)[-1]) for a in inv.args if "@" in a)
            login = (arg if len(arg) > 2 and ":" in arg else spec).endswith(_LOGIN_PORTS)
            why = "ssh -R opens a port on another host into this machine"
            if login:
                why += "'s login"
            return Finding("high" if bare or login else "medium", why, "exfiltration")
    return LOW


def _ngrok(inv: Invocation) -> Finding:
    """`ngrok tcp 22`: this machine's login on a public address (high); other ports: medium."""
    pos = positionals(inv.args)
    if pos[:1] in (["tcp"], ["http"], ["tls"]) and len(pos) > 1:
        port = pos[1].rsplit(":", 1)[-1]
        level: RiskLevel = "high" if f":{port}" in _LOGIN_PORTS else "medium"
        return Finding(level, f"ngrok puts local port {port} on a public address", "exfiltration")
    return LOW


def _x_display(inv: Invocation) -> Finding:
    args = inv.args
    for arg, value in with_next(args):
        if arg in ("-display", "--display", "-d"):
            host = value.rsplit(":", 1)[0]
            if host and host not in ("localhost", "unix", "127.0.0.1"):
                why = f"{inv.prog} -display hands a terminal to another host's X server ({host})"
                return Finding("critical", why, "exfiltration")
    return LOW


def _served(inv: Invocation) -> Finding:
    """`python3 -m http.server` in a home or /, `php -S 0:80 -t /`: files served to anyone."""
    args = inv.args
    module = next((n for a, n in with_next(args) if a == "-m"), "")
    if module not in ("http.server", "SimpleHTTPServer") and not (
        (inv.prog == "php" and "-S" in args) or inv.prog == "httpd"
    ):
        return LOW
    flags = (
        ("--directory", "-d", "-t", "-h") if inv.prog == "httpd" else ("--directory", "-d", "-t")
    )
    where = next((n for a, n in with_next(args) if a in flags), "")
    where = where or inv.ctx.cwd or "."
    if where in ("~", "/") or classify(where) in _WHOLE:
        why = f"{inv.prog} serves {where} to the network"
        return Finding("high", why, "exfiltration")
    return LOW


CHANNEL_RULES = {
    "ssh": _ssh_tunnel,
    "ngrok": _ngrok,
    **dict.fromkeys(("python", "python2", "python3", "php", "httpd"), _served),
    **dict.fromkeys(("xterm", "uxterm", "urxvt", "rxvt", "aterm", "xfce4-terminal"), _x_display),
}
