"""Commands that run another command: sudo, env, nohup, timeout, xargs... and how to see through.

`unwrap` strips them (with their own options) so the rules judge the real program; `prog_of`
names the program a lexed command runs, and `echoed` the text an `echo`/`printf` prints — what a
pipe feeds to a shell, an interpreter, a database client or a control socket.
"""

from __future__ import annotations

import re
from functools import lru_cache
from shlex import split as shlex_split

from nerve.safety.lexer import Command
from nerve.safety.verdict import wordset

__all__ = ["ASSIGN", "WRAPPERS", "basename", "echoed", "prog_of", "skip_options", "unwrap"]

ASSIGN = re.compile(r"^[A-Za-z_]\w*(?:\[[^]]*\])?\+?=")
# wrapper -> options that take a value (the wrapped command follows the options)
_WRAPPERS: dict[str, frozenset[str]] = {
    "sudo": wordset("-u -g -p -C -D -h -r -t -U -T --user --group --prompt --chdir"),
    "doas": frozenset({"-u", "-C"}),
    "env": frozenset({"-u", "--unset", "-C", "--chdir", "-P"}),
    "nohup": frozenset(),
    "builtin": frozenset(),
    "command": frozenset(),
    "exec": frozenset({"-a"}),
    "time": frozenset({"-f", "-o", "--format", "--output"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "--class", "--classdata"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "setsid": frozenset(),
    "unbuffer": frozenset(),
    "caffeinate": frozenset({"-t", "-w"}),
    "chroot": frozenset({"--userspec", "--groups"}),
    "strace": frozenset({"-o", "-e", "-p", "-s", "-u"}),
    "ltrace": frozenset({"-o", "-e", "-p", "-s", "-u"}),
    "proxychains": frozenset({"-f"}),
    "proxychains4": frozenset({"-f"}),
    "torsocks": frozenset(),
    "busybox": frozenset(),
    "xargs": wordset("-I -n -P -d -L -s -E -a --max-args --max-procs --delimiter"),
    "parallel": frozenset(
        ["-j", "-P", "-n", "-N", "-S", "-I", "--jobs", "--max-args", "--sshlogin"]
    ),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "flock": frozenset({"-w", "-E", "--timeout", "--conflict-exit-code"}),
    "runuser": frozenset({"-u", "-g", "-G", "--user", "--group"}),
    "watch": frozenset({"-n", "--interval", "-d"}),
}
_TAKES_ONE_POSITIONAL = frozenset({"timeout", "chroot", "flock"})
WRAPPERS = frozenset(_WRAPPERS) | {"su", "sg", "watch"}


@lru_cache(maxsize=4096)
def basename(word: str) -> str:
    """`/usr/bin/RM.exe` → `rm`: the program a command word names (cached: words repeat)."""
    name = word.rsplit("/", 1)[-1].rsplit("\\", 1)[-1].lower()
    return name.removesuffix(".exe")


def skip_options(args: list[str], takes_value: frozenset[str]) -> list[str]:
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            return args[i + 1 :]
        if not arg.startswith("-") or arg == "-":
            break
        i += 2 if arg.split("=", 1)[0] in takes_value and "=" not in arg else 1
    return args[i:]


def unwrap(words: list[str]) -> tuple[list[str], bool, str | None]:
    """Strip wrappers: (the real command words, arguments also come from xargs, nested text)."""
    from_xargs = False
    while words:
        name = basename(words[0])
        if name in ("su", "sg") and "-c" in words:
            return [], from_xargs, " ".join(words[words.index("-c") + 1 :])
        if name == "su":
            return ["sh"], from_xargs, None  # su without -c: a shell reading its input
        if name == "flock" and ("-c" in words or "--command" in words):
            at = words.index("-c") if "-c" in words else words.index("--command")
            return [], from_xargs, " ".join(words[at + 1 : at + 2])
        if name == "watch":
            rest = skip_options(words[1:], _WRAPPERS["watch"])
            return [], from_xargs, " ".join(rest)
        if name not in _WRAPPERS:
            break
        if name == "command" and len(words) > 1 and words[1] in ("-v", "-V"):
            return [], from_xargs, None
        if name == "env" and "-S" in words:
            i = words.index("-S")
            words = shlex_split(words[i + 1]) + words[i + 2 :] if i + 1 < len(words) else []
            continue
        from_xargs = from_xargs or name in ("xargs", "parallel")
        rest = skip_options(words[1:], _WRAPPERS[name])
        if name == "sudo" and not rest and {"-i", "-s", "--login", "--shell"} & set(words):
            return ["sh"], from_xargs, None  # a shell reading its input: judged as `sh`
        while rest and ASSIGN.match(rest[0]):
            rest = rest[1:]
        if name in _TAKES_ONE_POSITIONAL and rest:
            rest = rest[1:]
        words = rest
    return words, from_xargs, None


def prog_of(cmd: Command | None) -> tuple[str, list[str]]:
    """The program a lexed command runs (wrappers stripped) and its arguments."""
    if cmd is None:
        return "", []
    words, _, _ = unwrap([w for w in cmd.words if not ASSIGN.match(w)])
    return (basename(words[0]), words[1:]) if words else ("", [])


_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{1,2}|0?[0-7]{1,3}|[ntr\\])")
_SPEC = re.compile(r"%[-+ #0-9.]*[sbdiqc]")
_ESCAPED = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\"}


def _unescape(text: str) -> str:
    """printf's and `echo -e`'s backslash escapes: \\x72, \\162, \\n, \\t."""

    def one(m: re.Match[str]) -> str:
        esc = m.group(1)
        if esc[0] == "x":
            return chr(int(esc[1:], 16))
        if esc[0].isdigit():
            return chr(int(esc, 8) & 0xFF)
        return _ESCAPED[esc]

    return _ESCAPE.sub(one, text) if "\\" in text else text


def _printf(args: list[str]) -> str:
    """What `printf FORMAT ARGS...` prints: the format reused until the arguments run out."""
    if not args:
        return ""
    fmt, rest = _unescape(args[0]), args[1:]
    specs = len(_SPEC.findall(fmt))
    if not specs or not rest:
        return _SPEC.sub("", fmt)
    return "".join(_fill(fmt, rest[i : i + specs]) for i in range(0, len(rest), specs))


def _fill(fmt: str, values: list[str]) -> str:
    it = iter(values)
    return _SPEC.sub(lambda _m: next(it, ""), fmt)


def echoed(upstream: Command | None) -> str | None:
    """What an upstream `echo`/`printf` prints into the pipe, or None for any other command."""
    src, args = prog_of(upstream)
    if src == "printf":
        return _printf([a for a in args if a != "--"])
    if src == "echo":
        flags = [a for a in args if a in ("-e", "-n", "-E", "-ne", "-en")]
        text = " ".join(a for a in args if a not in flags)
        return _unescape(text) if any("e" in f for f in flags) else text
    return None
