"""Options that run a shell command: judged as that command, whatever program carries them.

Many programs run a command named by one of their options: `tar --checkpoint-action=exec=CMD`,
`tar --to-command=CMD`, `tar -I CMD`, `zip -TT CMD`, `rsync -e CMD`, `ssh -o ProxyCommand=CMD`,
`vim -c ':!CMD'`, `xterm -e CMD`, `tmux new-session 'CMD'`, `screen -dm CMD`, `sed '1e CMD'`.
CMD is judged as the command it is (`vim -c ':!rm -rf ~'` is `rm -rf ~`); the host program is
then judged by its own rule. `tar -I zstd`, `rsync -e ssh` and `vim -c ':wq'` pass.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from shlex import join

from nerve.safety.invocation import Invocation, positionals, with_next
from nerve.safety.verdict import LOW, Finding, higher, wordset

__all__ = ["OPTION_RULES"]

Rule = Callable[[Invocation], Finding]

# program -> the options whose value is a command line (separate or `--opt=CMD`)
_COMMAND_OPTS: dict[str, frozenset[str]] = {
    "tar": wordset(
        "--to-command -I --use-compress-program --rsh-command -F --info-script --new-volume-script"
    ),
    "zip": frozenset({"-TT", "--unzip-command"}),
    "rsync": frozenset({"-e", "--rsh"}),
    "xterm": frozenset({"-e"}),
    "konsole": frozenset({"-e"}),
    "xfce4-terminal": frozenset({"-e", "-x", "--command"}),
    "script": frozenset({"-c", "--command"}),
}
_SSH_COMMANDS = re.compile(r"^(?:proxycommand|localcommand|remotecommand)\s*[= ]\s*(.+)$", re.I)
_VIM = frozenset({"vim", "vi", "nvim", "view", "ex", "vimdiff", "rvim", "gvim"})
_VIM_SHELL = re.compile(r"^:?\s*(?:!|sil(?:ent)?!?\s*!|call\s+system\s*\(\s*['\"])(.+?)['\")]*$")
_VIM_CODE = re.compile(r"^:?\s*(py3?|python3?|lua|perl|ruby)\s+(.+)$")
_SED_EXEC = re.compile(r"(?:^|[;\n{])\s*(?:\d+|\$|/[^/]*/)?\s*e\s+([^;\n}]+)")


def _nested(inv: Invocation, command: str, via: str) -> Finding:
    return inv.ctx.nested(command, f"{inv.prog} {via}")


def _command_opts(inv: Invocation) -> Finding:
    names = _COMMAND_OPTS.get(inv.prog, frozenset())
    best = LOW
    for arg, value in with_next(inv.args):
        name, eq, glued = arg.partition("=")
        command = ""
        if name in names:
            command = glued if eq else value
        elif inv.prog == "tar" and name == "--checkpoint-action":
            action = glued if eq else value
            command = action.split("=", 1)[1] if action.startswith("exec=") else ""
        if command:
            best = higher(best, _nested(inv, command, name))
    return best


def _ssh(inv: Invocation) -> Finding:
    best = LOW
    for arg, value in with_next(inv.args):
        option = arg[2:] if arg.startswith("-o") and len(arg) > 2 else value if arg == "-o" else ""
        m = _SSH_COMMANDS.match(option) if option else None
        if m is not None:
            best = higher(best, _nested(inv, m.group(1), "-o"))
    return best


def _vim(inv: Invocation) -> Finding:
    best = LOW
    for arg, value in with_next(inv.args):
        command = value if arg in ("-c", "--cmd") else arg[1:] if arg.startswith("+") else ""
        shell = _VIM_SHELL.match(command) if command else None
        code = _VIM_CODE.match(command) if command and shell is None else None
        if shell is not None:
            best = higher(best, _nested(inv, shell.group(1), "runs a shell command"))
        elif code is not None:
            lang = {"py": "python3", "py3": "python3"}.get(code.group(1), code.group(1))
            flag = "-e" if lang in ("lua", "perl", "ruby") else "-c"
            best = higher(best, _nested(inv, join([lang, flag, code.group(2)]), "runs code"))
    return best


def _terminal_mux(inv: Invocation) -> Finding:
    """`tmux new-session -d 'CMD'`, `tmux send-keys 'CMD' Enter`, `screen -dmS x CMD...`."""
    args = inv.args
    if inv.prog == "screen":
        if "-X" in args and "stuff" in args:
            return _nested(inv, " ".join(args[args.index("stuff") + 1 :]), "-X stuff")
        i = 0
        while i < len(args) and args[i].startswith("-"):  # -dmS NAME: S takes the next word
            i += 2 if args[i][-1:] in "SctpLX" and len(args[i]) > 1 else 1
        return _nested(inv, join(args[i:]), "runs") if args[i:] else LOW
    pos = positionals(args, frozenset({"-s", "-n", "-t", "-c", "-x", "-y", "-e", "-F", "-L"}))
    if not pos:
        return LOW
    verb, rest = pos[0], pos[1:]
    if verb in ("new", "new-session", "new-window", "neww", "split-window", "splitw", "run-shell"):
        return _nested(inv, " ".join(rest), verb) if rest else LOW
    if verb in ("send-keys", "send"):
        typed = " ".join(w for w in rest if w not in ("Enter", "C-m", "KPEnter"))
        return _nested(inv, typed, "send-keys")
    return LOW


def _sed(inv: Invocation) -> Finding:
    """GNU sed's `e COMMAND` runs COMMAND: `sed -n '1e rm -rf ~' file`."""
    best = LOW
    scripts = [v for a, v in with_next(inv.args) if a in ("-e", "--expression")]
    scripts += positionals(inv.args, frozenset({"-e", "--expression", "-f", "--file"}))[:1]
    for script in scripts:
        for m in _SED_EXEC.finditer(script):
            best = higher(best, _nested(inv, m.group(1).strip(), "e"))
    return best


def _gnome_terminal(inv: Invocation) -> Finding:
    if "--" in inv.args:
        return _nested(inv, join(inv.args[inv.args.index("--") + 1 :]), "--")
    return _command_opts(inv)


OPTION_RULES: dict[str, Rule] = {
    **dict.fromkeys(_COMMAND_OPTS, _command_opts),
    **dict.fromkeys(("ssh", "scp", "sftp"), _ssh),
    **dict.fromkeys(_VIM, _vim),
    **dict.fromkeys(("tmux", "screen"), _terminal_mux),
    **dict.fromkeys(("sed", "gsed"), _sed),
    "gnome-terminal": _gnome_terminal,
}
