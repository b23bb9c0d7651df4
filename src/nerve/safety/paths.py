"""Where a path points, for judging deletes and writes by their target, not their spelling.

`/tmp/../etc`, `"$TMPDIR/../etc"`, `${HOME}` and `~root` are resolved lexically first, so the
class is the one of the real target: root, home, system, whole working directory, temp, a
relative path inside the workspace, a device, or unknown (an unresolved variable).
"""

from __future__ import annotations

import posixpath
import re
from typing import Literal

from nerve.safety.verdict import wordset

__all__ = [
    "PathClass",
    "alternatives",
    "classify",
    "expand",
    "is_block_device",
    "is_os_critical",
    "is_system_config",
]

PathClass = Literal[
    "root",  # /
    "home_root",  # ~, $HOME, /home, /root, /Users, /home/alice
    "home",  # something inside a home directory
    "system_root",  # /etc, /usr, /var: a top-level system directory itself
    "top_level",  # /data, /srv2: some other top-level directory itself
    "system",  # inside a system directory: /etc/nginx, /usr/local/bin/x
    "cwd_all",  # ., *, .*, ./*, .., ../..: the whole working directory or a parent
    "temp",  # /tmp, /var/tmp, $TMPDIR, /dev/shm
    "device",  # /dev/sda, /dev/nvme0n1
    "relative",  # build, ./dist, node_modules
    "absolute",  # deeper than one level somewhere else: /work/app/build
    "unknown",  # starts with a variable or substitution we cannot resolve
]

_SYSTEM_TOP = wordset(
    "etc usr bin sbin boot var lib lib32 lib64 libx32 opt dev proc sys srv snap run System "
    "Library Applications private Volumes cores"
)
_HOME_TOP = frozenset({"home", "root", "Users"})
_TEMP_PREFIXES = ("/tmp", "/var/tmp", "/dev/shm", "/private/tmp", "/private/var/tmp")
_TEMP_VARS = frozenset({"TMPDIR", "TMP", "TEMP", "TEMPDIR", "XDG_RUNTIME_DIR"})
_HOME_VARS = frozenset({"HOME", "USERPROFILE"})
_CWD_VARS = frozenset({"PWD"})
_VAR = re.compile(
    r"^\$(?:\{(?P<braced>[A-Za-z_]\w*)(?::?(?:[-=](?P<default>[^}]*)|\?[^}]*))?\}"
    r"|(?P<name>[A-Za-z_]\w*))"  # ${X:-d}, ${X:=d}: X or d; ${X:?msg}: X
)
_BLOCK_DEVICE = re.compile(
    r"^/dev/(?:sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|disk\d|rdisk\d|md\d|dm-\d|mapper/|"
    r"loop\d|nbd\d|sr\d|fd\d|root\b|xda|da\d|ada\d)"
)
_HARMLESS_DEVICES = frozenset(
    {"/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty"}
)


_OS_CRITICAL = re.compile(
    r"^/+(?:etc|boot|bin|sbin|lib|lib32|lib64|libx32|usr|dev|proc|sys|System|Library|var/lib)"
    r"(?:/|$)"
)


def is_os_critical(path: str) -> bool:
    """Where the operating system itself lives: writing there can break the machine."""
    return bool(_OS_CRITICAL.match(posixpath.normpath(path))) if path.startswith("/") else False


_SYSTEM_CONFIG = re.compile(r"^/+(?:etc|boot|usr|bin|sbin|lib|lib32|lib64|libx32)(?:/|$)")


def is_system_config(path: str) -> bool:
    """The operating system's own files and configuration (not /dev, /proc or /sys, whose
    files are interfaces to devices and the kernel)."""
    return bool(_SYSTEM_CONFIG.match(posixpath.normpath(path))) if path.startswith("/") else False


def is_block_device(path: str) -> bool:
    return bool(_BLOCK_DEVICE.match(path))


def expand(path: str) -> str | None:
    """Replace the variables whose meaning we know; None when the start is unknowable."""
    if path.startswith("~"):
        head, _, rest = path[1:].partition("/")
        return ("/home/" + head if head else "/home/~") + ("/" + rest if rest else "")
    m = _VAR.match(path)
    if m is None:
        return path if "$" not in path.split("/", 1)[0] else None
    name = m.group("braced") or m.group("name")
    rest = path[m.end() :]
    if name in _TEMP_VARS:
        return "/tmp" + rest
    if name in _HOME_VARS:
        return "/home/~" + rest
    if name in _CWD_VARS:
        return "." + rest
    if m.group("default"):
        return expand(m.group("default") + rest)
    return None


def classify(raw: str) -> PathClass:
    """The class of a path as a shell command would see it (after quote removal)."""
    if not raw:
        return "relative"
    if raw.startswith("//"):
        raw = "/" + raw.lstrip("/")
    path = expand(raw)
    if path is None:
        return "unknown"
    if path in _HARMLESS_DEVICES:
        return "temp"
    if is_block_device(path):
        return "device"
    absolute = path.startswith("/")
    norm = posixpath.normpath(path)
    if absolute:
        if norm in ("/", "//") or norm == "/*" or norm == "/.*":
            return "root"
        if norm.startswith(_TEMP_PREFIXES) and (
            len(norm) == len(p := next(t for t in _TEMP_PREFIXES if norm.startswith(t)))
            or norm[len(p)] == "/"
        ):
            return "temp"
        parts = norm.strip("/").split("/")
        top = parts[0]
        if top in _HOME_TOP or top in ("*", ".*"):
            if len(parts) == 1 or (top == "home" and len(parts) == 2) or parts[-1] in ("*", ".*"):
                return "home_root" if len(parts) <= 2 else "home"
            return "home"
        if len(parts) == 1:
            return "system_root" if top in _SYSTEM_TOP else "top_level"
        if top in _SYSTEM_TOP:
            return "system_root" if len(parts) == 2 and parts[1] in ("*", ".*") else "system"
        return "absolute"
    if norm in (".", "*", ".*", "./*", "./.*") or all(
        p in ("..", "*", ".*") for p in norm.split("/")
    ):
        return "cwd_all"
    return "relative"


_BRACES = re.compile(r"(?<!\$)\{([^{}$]*,[^{}$]*)\}")
_MAX_ALTERNATIVES = 32


def alternatives(word: str) -> list[str]:
    """The words bash's brace expansion makes: `/tmp/{a,../etc}` is `/tmp/a` and `/tmp/../etc`.
    A word with no `{x,y}` group (or `${var}`) is itself."""
    if "{" not in word or "," not in word:
        return [word]
    out = [word]
    while any(_BRACES.search(w) for w in out) and len(out) <= _MAX_ALTERNATIVES:
        done: list[str] = []
        for w in out:
            m = _BRACES.search(w)
            if m is None:
                done.append(w)
                continue
            done += [w[: m.start()] + part + w[m.end() :] for part in m.group(1).split(",")]
        out = done
    return out[:_MAX_ALTERNATIVES]
