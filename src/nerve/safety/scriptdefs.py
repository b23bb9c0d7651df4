"""What a script defines for later and then uses: functions, aliases, files it writes and runs.

`f() { rm -rf "$1"; }; f /` deletes `/`, though no line says so: a function's body is judged
again at each call with the call's arguments in place of `$1`...`$9`, `$@` and `$*`.
`alias ll='rm -rf ~'` is judged as the command it stands for. `echo 'rm -rf ~' > x.sh; sh x.sh`
and `cat > x.sh <<EOF ... EOF` followed by `bash x.sh` run what was written: the text a
script writes with echo, printf, cat or tee is remembered (Ctx.written) and judged when a shell
or `source` runs that file.
"""

from __future__ import annotations

import posixpath
import re
from shlex import quote

from nerve.safety.inline import check_code
from nerve.safety.invocation import Ctx, Invocation
from nerve.safety.lexer import Command
from nerve.safety.sensitive import persistence_file
from nerve.safety.targets import resolved
from nerve.safety.verdict import LOW, Finding, higher
from nerve.safety.wrappers import basename, echoed, prog_of

__all__ = ["called", "define_functions", "judge_alias", "remember_written", "written_run"]

# `name() {`, `name () (`, `function name {`, `function name() {`
_DEFINITION = re.compile(
    r"(?P<pre>^|[\s;&|(){}])(?:function\s+(?P<kw>[\w.:-]+)\s*(?:\(\s*\))?|(?P<name>[\w.:-]+)\s*\(\s*\))"
    r"\s*(?P<open>[{(])"
)
# `"$1"` (quotes and all) or a bare `$1`: replaced by the call's argument, quoted once.
_MAYBE_DEFINITION = re.compile(r"\(\s*\)|function\s")  # a cheap test before _DEFINITION
_POSITIONAL = re.compile(r"\"\$\{?([1-9@*#])\}?\"|\$\{?([1-9@*#])\}?")
_MAX_BODY = 4_000
_SHELL_RUNNERS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "source", "."})
_CODE_RUNNERS = frozenset(
    {"python", "pypy", "node", "nodejs", "perl", "ruby", "php", "go", "deno", "bun"}
)


def _body_end(text: str, start: int, opener: str) -> int:
    """Index of the brace (or parenthesis) that closes the body opened just before `start`."""
    closer = "}" if opener == "{" else ")"
    depth, i, n = 1, start, len(text)
    while i < n:
        c = text[i]
        if c in "'\"":
            end = text.find(c, i + 1)
            i = n if end < 0 else end + 1
            continue
        if c == "\\":
            i += 2
            continue
        if c == opener:
            depth += 1
        elif c == closer:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return n


def define_functions(text: str, ctx: Ctx) -> str:
    """Record every function `text` defines (the latest definition of a name wins); returns the
    text with each `name() {` header cut to its `{`, so the lexer sees no call of `name` there."""
    if _MAYBE_DEFINITION.search(text) is None or _DEFINITION.search(text) is None:
        return text
    for m in _DEFINITION.finditer(text):
        name = m.group("kw") or m.group("name")
        end = _body_end(text, m.end(), m.group("open"))
        ctx.functions[name] = text[m.end() : end][:_MAX_BODY]
    return _DEFINITION.sub(lambda m: m.group("pre") + m.group("open"), text)


def called(words: list[str], ctx: Ctx) -> Finding | None:
    """A call of a function the script defined: its body, judged with these arguments."""
    body = ctx.functions.get(words[0]) if words else None
    if body is None:
        return None
    args = words[1:]

    def arg(m: re.Match[str]) -> str:
        ref = m.group(1) or m.group(2)
        if ref in "@*":
            return " ".join(quote(a) for a in args)
        if ref == "#":
            return str(len(args))
        i = int(ref) - 1
        return quote(args[i]) if i < len(args) else "''"

    return ctx.nested(_POSITIONAL.sub(arg, body), f"in the function {words[0]}")


def judge_alias(args: list[str], ctx: Ctx) -> Finding:
    """`alias name='command'`: the alias runs its command wherever the name is typed."""
    best = LOW
    for arg in args:
        name, eq, value = arg.partition("=")
        if eq and value.strip():
            best = higher(best, ctx.nested(value, f"the alias {name}"))
            ctx.functions[name] = value + ' "$@"'  # `alias c=curl; c URL -d "$KEY"` later
    return best


def _written_text(cmd: Command, prog: str) -> str | None:
    if prog in ("echo", "printf"):
        return echoed(cmd)
    if prog in ("cat", "tee"):
        bodies = [r.target for r in cmd.redirects if r.op in ("<<", "<<-", "<<<")]
        return "\n".join(bodies) if bodies else None
    return None


def remember_written(cmd: Command, ctx: Ctx) -> Finding:
    """Keep the text `echo TEXT > FILE`, `cat > FILE <<EOF` and `tee FILE <<< TEXT` write;
    text planted where it runs later (a git hook, a start-up file) is judged as the command."""
    prog, args = prog_of(cmd)
    text = _written_text(cmd, prog)
    if text is None:
        return LOW
    targets = [r.target for r in cmd.redirects if r.op in (">", ">>", ">|")]
    if prog == "tee":
        targets += [a for a in args if not a.startswith("-")]
    best = LOW
    for target in targets:
        where = resolved(target, ctx) or posixpath.normpath(target)
        ctx.written[where] = (ctx.written.get(where, "") + "\n" + text).strip()
        if persistence_file(target) is not None:
            best = higher(best, ctx.nested(text, f"planted in {target}"))
    return best


def written_run(words: list[str], ctx: Ctx) -> Finding | None:
    """A shell, `source`, an interpreter (`python3 x.py`, `go run x.go`) or the file itself
    running a file this script wrote."""
    if not ctx.written:
        return None
    prog = basename(words[0])
    ran = words[0]
    args = words[2:] if prog in ("go", "deno", "bun") and words[1:2] == ["run"] else words[1:]
    code = prog.rstrip("0123456789.") in _CODE_RUNNERS
    if prog in _SHELL_RUNNERS or code:
        ran = next((w for w in args if not w.startswith("-")), "")
    elif "/" not in ran:
        return None  # a program on PATH, not a file the script wrote
    text = ctx.written.get(resolved(ran, ctx) or posixpath.normpath(ran)) if ran else None
    if text is None:
        return None
    if code:  # judged as inline code: shell-outs, deletes, sockets wired to a shell
        found = check_code(text, Invocation(prog, [], Command(), None, False, ctx))
        return found if found.risk == "low" else found.labelled(f"{ran}, written and run: ")
    return ctx.nested(text, f"{ran}, written by this script and then run")
