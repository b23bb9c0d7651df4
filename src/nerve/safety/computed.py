"""Programs nerve learns only while walking a script: named by a substitution, or downloaded.

`$(echo rm) -rf /` is judged as the command the substitution plainly prints (echo/printf,
which/command -v); a program computed any other way is refused, since nothing tells what runs.
A file a downloader just wrote and a later command runs (`curl -o /tmp/x.sh URL && bash
/tmp/x.sh`, `wget URL -O a && chmod +x a && ./a`, `curl URL > s.sh; sh s.sh`) is code from the
network, as surely as `curl | sh` (`high`, code): the downloads are remembered in `Ctx.fetched`.
"""

from __future__ import annotations

import posixpath

from nerve.safety.invocation import Ctx
from nerve.safety.lexer import SUB, Command, Script
from nerve.safety.targets import resolved
from nerve.safety.verdict import LOW, Finding, wordset
from nerve.safety.wrappers import basename, echoed

__all__ = ["computed_program", "fetched_run", "resolve_subs"]

_LOOKUPS = frozenset({"which", "command", "type", "whereis"})  # $(which python) names a program
# Substitutions that print a path: `$(dirname "$0")/run.sh` runs a file, like `./run.sh`.
_PATH_PRINTERS = frozenset({"dirname", "readlink", "realpath", "pwd", "mktemp"})
_FETCHERS = wordset("curl wget aria2c fetch http xh")
_OUTPUT_OPTS = {  # the option naming the file written (wget -o names its log)
    "curl": frozenset({"-o", "--output"}),
    "wget": frozenset({"-O", "--output-document"}),
    "aria2c": frozenset({"-o", "--out"}),
}
# Programs that run the file named by their first argument.
_RUNNERS = wordset(
    "sh bash zsh dash ksh ash fish source . python python2 python3 node nodejs deno bun perl "
    "ruby php lua"
)


def computed_program(cmd: Command, words: list[str], ctx: Ctx) -> Finding | None:
    """A program named by a substitution (`$(echo rm) -rf /`): judged as the command it makes
    when the substitution plainly prints a name (echo/printf, which/command -v); refused
    otherwise, since nothing tells what would run."""
    if SUB not in words[0]:
        return None
    if words == [SUB] and cmd.subs and all(_silent(script) for script in cmd.subs):
        return LOW  # `if $(grep -q x f >/dev/null); then`: it prints nothing, so runs nothing
    for script in cmd.subs:
        for pipeline in script:
            if not pipeline.commands:
                continue
            last = pipeline.commands[-1]
            if (
                last.words
                and last.words[0] in _PATH_PRINTERS
                and (words[0] != SUB or not words[1:])
            ):
                return LOW  # a file nerve cannot see (`$(dirname "$0")/build.sh`), as ./x
            text = echoed(last)
            if text is None and last.words and last.words[0] in _LOOKUPS:
                names = [a for a in last.words[1:] if not a.startswith("-")]
                text = names[0] if names else None
            if text and text.strip():
                program = words[0].replace(SUB, text.strip(), 1)
                made = " ".join([program, *words[1:]])
                return ctx.nested(made, "with its program named by a substitution")
    return Finding(
        "high",
        "the program to run is computed at run time by a substitution; nerve cannot tell what runs",
        "code",
    )


def _silent(script: Script) -> bool:
    """Every pipeline's output goes to a file (`cmd > /dev/null`): the substitution is empty."""
    return bool(script) and all(
        p.commands and any(r.op in (">", "&>", ">|") for r in p.commands[-1].redirects)
        for p in script
    )


def _outputs(cmd: Command, words: list[str]) -> list[str]:
    """The files a downloader writes: -o/-O FILE, the URL's name (wget, curl -O), `> FILE`."""
    prog, args = basename(words[0]), words[1:]
    opts = _OUTPUT_OPTS.get(prog, frozenset())
    letters = "".join(o[1] for o in opts if len(o) == 2)
    out = [r.target for r in cmd.redirects if r.op in (">", ">>", ">|")]
    named = False
    for i, arg in enumerate(args):
        flag, eq, value = arg.partition("=")
        bundled = arg[:1] == "-" and arg[1:2] != "-" and arg[-1:] in letters  # -sSLo FILE
        if eq and flag in opts:
            out.append(value)
            named = True
        elif (arg in opts or (bundled and len(arg) > 2)) and i + 1 < len(args):
            out.append(args[i + 1])
            named = True
    remote_name = any(a[:1] == "-" and a[1:2] != "-" and "O" in a for a in args)  # -sSLO
    if not named and (prog == "wget" or remote_name or "--remote-name" in args):
        urls = [a for a in args if "://" in a]
        out += [posixpath.basename(u.split("?", 1)[0].rstrip("/")) for u in urls]
    return [o for o in out if o and o not in ("-", "/dev/null")]


def _where(path: str, ctx: Ctx) -> str:
    return resolved(path, ctx) or posixpath.normpath(path)


def fetched_run(cmd: Command, words: list[str], ctx: Ctx) -> Finding | None:
    """Remember what a downloader writes; a later command that runs such a file is `high`."""
    prog = basename(words[0])
    if prog in _FETCHERS:
        for name in _outputs(cmd, words):
            ctx.fetched.add(_where(name, ctx))
        return None
    if not ctx.fetched:
        return None
    ran = words[0]
    if prog in _RUNNERS:
        ran = next((w for w in words[1:] if not w.startswith("-")), "")
    if ran and _where(ran, ctx) in ctx.fetched:
        return Finding("high", f"{prog} runs {ran}, a file just downloaded", "code")
    return None


def _printed(script: Script, ctx: Ctx) -> str | None:
    """What a substitution plainly prints: an echo/printf's text, or `pwd`'s directory."""
    if len(script) != 1 or len(script[0].commands) != 1:
        return None
    cmd = script[0].commands[0]
    if cmd.words == ["pwd"] and not cmd.redirects:
        return ctx.cwd or ctx.scope.cwd or "$PWD"
    text = echoed(cmd) if not cmd.redirects else None
    return text.strip() if text is not None and "\n" not in text.strip() else None


def resolve_subs(words: list[str], cmd: Command, ctx: Ctx) -> list[str]:
    """`rm -rf $(echo ~)`, `rm -rf "$(pwd)"`: each substitution replaced by what it prints,
    when every one of them plainly prints something (else the words are left as they are)."""
    if not cmd.subs or SUB in words[0] or sum(w.count(SUB) for w in words) != len(cmd.subs):
        return words  # a program named by a substitution: computed_program judges it
    printed = [_printed(script, ctx) for script in cmd.subs]
    if any(p is None for p in printed):
        return words
    it = iter(printed)
    out = []
    for word in words:
        while SUB in word:
            word = word.replace(SUB, next(it) or "", 1)
        out.append(word)
    return out
