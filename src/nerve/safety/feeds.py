"""Commands built from input: what xargs and GNU parallel would run.

`echo 'rm -rf /' | xargs bash -c`, `xargs -I{} sh -c '{}'` and `xargs -I{} {}` run the input as
code: the text an echo pipes in is judged as a command; input from a download is `high`, from
anything else (`cat cmds.txt | xargs -I{} sh -c {}`) `medium`, since nerve cannot see it.
`parallel ::: CMD...` runs each argument as a command, `parallel sh -c ::: CMD` and `parallel rm
-rf ::: /` build one command line per argument (`{}` replaced, or the argument appended), and a
bare `parallel` (or `parallel :::: file`) runs the lines it reads. `find . -name '*.pyc' | xargs
rm -f` and `parallel gzip ::: *.log` are judged as the rm and gzip they build. Any other
command xargs or parallel builds from input nerve can read is judged as built: `echo / | xargs
-I% rm -rf %` is `rm -rf /`, `find A | xargs CMD` is `find A -exec CMD {} +`, `ls D | xargs
CMD` acts on `D/*`.
"""

from __future__ import annotations

from shlex import join, quote

from nerve.safety.findrules import EXEC_JUDGED, FIND_FILTERS, find_roots
from nerve.safety.invocation import Ctx
from nerve.safety.lexer import Command
from nerve.safety.redirects import SHELLS
from nerve.safety.triggers import may_matter
from nerve.safety.verdict import Finding, higher
from nerve.safety.wrappers import basename, echoed, prog_of

__all__ = ["judge_fed"]

_SEPARATORS = frozenset({":::", "::::", ":::+", "::::+"})
_DOWNLOADERS = frozenset({"curl", "wget", "fetch", "aria2c", "nc", "ncat", "socat", "telnet"})
_MAX_ARGS = 16
_PRINTS_OTHER = frozenset({"-exec", "-execdir", "-ok", "-okdir", "-printf", "-fprintf", "-ls"})


def _from_input(feeder: str, upstream: Command | None, ctx: Ctx, where: str) -> Finding:
    """Commands a feeder reads from its input and runs."""
    text = echoed(upstream)
    if text is not None:
        return ctx.nested(text, f"commands fed to {where}")
    src, _ = prog_of(upstream)
    if src in _DOWNLOADERS:
        return Finding("high", f"{where} runs commands downloaded by {src}", "code")
    return Finding("medium", f"{where} runs commands read from its input", "code")


def _found_by(upstream: Command | None) -> str | None:
    """What `find ROOT ... | xargs -I{} sh -c 'CMD {}'` hands CMD: ROOT itself when find is
    unfiltered (every entry, so the whole tree), else a file under it."""
    prog, args = prog_of(upstream)
    if prog != "find":
        return None
    roots = find_roots(args)
    root = quote(roots[0]) if roots else "."
    return root if not any(a in FIND_FILTERS for a in args) else root.rstrip("/") + "/match"


def _own_options(cmd: Command, words: list[str]) -> list[str]:
    """The feeder's own options: the words between `xargs` (or `parallel`) and its command."""
    at = next((i for i, w in enumerate(cmd.words) if basename(w) in ("xargs", "parallel")), -1)
    return cmd.words[at + 1 : len(cmd.words) - len(words)] if at >= 0 else []


def _replace_opt(own: list[str]) -> str | None:
    """xargs -I R / -i / --replace: the string each input line replaces; None without one."""
    for i, word in enumerate(own):
        if word in ("-I", "--replace") and i + 1 < len(own):
            return own[i + 1]
        if word.startswith("-I") and len(word) > 2:
            return word[2:]
        if word == "-i" or word.startswith(("--replace=", "-i")):
            return word.split("=", 1)[1] if "=" in word else (word[2:] or "{}")
    return None


def _items(upstream: Command | None) -> list[str] | None:
    """The lines an echo, printf or ls upstream prints (ls: DIR/* for each DIR it lists)."""
    text = echoed(upstream)
    if text is not None:
        return text.split()[:_MAX_ARGS]
    prog, args = prog_of(upstream)
    if prog == "ls":
        listed = [a for a in args if not a.startswith("-")] or ["."]
        return [d.rstrip("/") + "/*" for d in listed][:_MAX_ARGS]
    return None


def _built(
    words: list[str], upstream: Command | None, repl: str | None, ctx: Ctx
) -> Finding | None:
    """What `UPSTREAM | xargs WORDS` runs, when nerve can read what UPSTREAM prints."""
    prog, args = prog_of(upstream)
    prints_paths = not _PRINTS_OTHER & set(args)  # `-exec basename {}` prints names, not paths
    if prog == "find" and prints_paths:  # each file find prints, handed to WORDS: find's -exec
        if basename(words[0]) not in EXEC_JUDGED and not may_matter(join(words), ctx.env):
            return None  # `find ... | xargs zip x.zip`: nothing find's rule would add
        command = [w.replace(repl, "{}") for w in words] if repl else [*words, "{}"]
        end = "\\;" if repl else "+"
        text = f"{join(['find', *args])} -exec {join(command)} {end}"
        return ctx.nested(text, "a command xargs builds from what find prints")
    items = _items(upstream) if prog != "find" else None
    if not items:
        return None
    if repl is None:
        texts = [join([*words, *items])]
    else:
        shown = "*" if prog == "ls" else None  # `ls D | xargs -I{} cat D/{}`: every entry
        texts = [join(w.replace(repl, shown or item) for w in words) for item in items]
    best: Finding | None = None
    for text in texts:
        found = ctx.nested(text, "a command xargs builds from its input")
        best = found if best is None else higher(best, found)
        if best.blocks:
            break
    return best


def _replstr(words: list[str]) -> str:
    for i, word in enumerate(words):
        if word in ("-I", "--replace") and i + 1 < len(words):
            return words[i + 1]
        if word.startswith("-I") and len(word) > 2:
            return word[2:]
        if word.startswith(("--replace=", "-i")):
            return word.split("=", 1)[1] if "=" in word else "{}"
    return "{}"


def _xargs(cmd: Command, words: list[str], upstream: Command | None, ctx: Ctx) -> Finding | None:
    replstr = _replstr(cmd.words)
    if words[0] == replstr:
        return _from_input("xargs", upstream, ctx, "xargs")
    prog = basename(words[0])
    if prog not in SHELLS:
        return _built(words, upstream, _replace_opt(_own_options(cmd, words)), ctx)
    args = words[1:]
    i = 0
    code_mode = False
    while i < len(args) and args[i].startswith("-") and not args[i].startswith("--"):
        code_mode = code_mode or "c" in args[i]
        i += 1
    if not code_mode:
        return None  # script files named by the input
    code = args[i] if i < len(args) else None
    if code is None or code.strip() == replstr:
        return _from_input("xargs", upstream, ctx, f"xargs {prog} -c")
    if replstr in code:
        filled = code.replace(replstr, echoed(upstream) or _found_by(upstream) or "x")
        return ctx.nested(filled, f"inside `xargs {prog} -c`")
    return None


def _parallel(words: list[str], upstream: Command | None, ctx: Ctx) -> Finding | None:
    sep = next((i for i, w in enumerate(words) if w in _SEPARATORS), len(words))
    command, rest = words[:sep], words[sep:]
    if not rest:
        if not command:
            return _from_input("parallel", upstream, ctx, "parallel")
        repl = "{}" if any("{}" in w for w in command) else None
        return _built(command, upstream, repl, ctx)  # one command per input line
    values: list[str] = []
    for i, word in enumerate(rest):
        if word.startswith("::::") and not command:
            src = rest[i + 1] if i + 1 < len(rest) else "a file"
            return Finding("medium", f"parallel runs commands read from {src}", "code")
        if word not in _SEPARATORS:
            values.append(word)
    best: Finding | None = None
    for value in values[:_MAX_ARGS]:
        if not command:
            text = value
        elif any("{}" in w for w in command):
            text = " ".join(command).replace("{}", quote(value))
        else:
            text = " ".join([*command, quote(value)])
        found = ctx.nested(text, "a command parallel builds")
        best = found if best is None else higher(best, found)
        if best.blocks:
            break
    return best


def judge_fed(cmd: Command, words: list[str], upstream: Command | None, ctx: Ctx) -> Finding | None:
    """What xargs or parallel in `cmd` runs, when its input makes the command; None to judge the
    unwrapped `words` as usual (their arguments come from the input)."""
    feeder = next((b for w in cmd.words if (b := basename(w)) in ("xargs", "parallel")), "")
    if feeder == "parallel":
        if not words and cmd.words[-1:] != ["parallel"] and not cmd.words[-1].startswith("-"):
            return None  # a command the unwrapping took for an assignment (`'x={}; mv ...'`)
        return _parallel(words, upstream, ctx)
    if feeder == "xargs" and words:
        return _xargs(cmd, words, upstream, ctx)
    return None
