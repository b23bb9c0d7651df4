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
from nerve.safety.lexer import SUB, Command
from nerve.safety.targets import resolved
from nerve.safety.verdict import LOW, Finding, wordset
from nerve.safety.wrappers import basename, echoed

__all__ = ["computed_program", "fetched_run"]

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
    if not named and (prog == "wget" or "-O" in args or "--remote-name" in args):
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
