"""Shell commands, judged by what they would run: parse, don't grep.

A cheap first pass (triggers.may_matter on a folded copy) lets text with no dangerous word
through. Everything else is lexed (lexer.py) and walked: wrappers are stripped (sudo, env X=1,
nohup, nice -n 5, timeout 10, xargs, /usr/bin/...), nested code is followed (`bash -c`, `eval`,
`$( )`, backticks, here-documents fed to a shell, `curl | sh`, `ssh host CMD`, `python -c`), and
each real program is judged by a rule that knows it (fsrules, toolrules, clirules, servicerules,
inline) or by the generic subcommand rule. What the script defines for later is followed too
(scriptdefs.py): functions called with arguments, aliases, arrays run as commands, files it
writes and then runs. Arguments of echo, grep, commit messages and here-documents fed to cat are
data and never judged as commands.

The first blocking finding is the verdict; a long script is judged line by line (segments.py).
"""

from __future__ import annotations

import re

from nerve.safety.accountrules import ACCOUNT_RULES
from nerve.safety.clirules import CLI_RULES, generic_cli, sql_client
from nerve.safety.computed import computed_program, fetched_run, resolve_subs
from nerve.safety.exfilrules import CHANNEL_RULES, piped_off
from nerve.safety.feeds import judge_fed
from nerve.safety.fsrules import FS_RULES, sed_in_place
from nerve.safety.hostrules import HOST_RULES
from nerve.safety.inline import CODE_FLAGS, api_calls, awk, interpreter
from nerve.safety.invocation import Ctx, Invocation
from nerve.safety.lexer import SUB, Command, Script, lex
from nerve.safety.machinerules import assigned as judge_assignment
from nerve.safety.netrules import NET_RULES, sent_on
from nerve.safety.normalize import normalize
from nerve.safety.pipelines import (
    EXTRA,
    fed_to_a_shell,
    judge_pipeline,
    judge_subs,
    makes_temp,
    passes_through,
)
from nerve.safety.readers import READERS, judge_reader
from nerve.safety.redirects import judge_redirects
from nerve.safety.scope import DEFAULT_SCOPE, Scope
from nerve.safety.scriptdefs import (
    called,
    define_functions,
    judge_alias,
    remember_written,
    written_run,
)
from nerve.safety.secretrules import SECRET_CLIS, env_read, reveals_secret
from nerve.safety.segments import split
from nerve.safety.servicerules import SERVICE_RULES
from nerve.safety.shellrunners import (
    SHELLS,
    echoed_by_subs,
    runs_download,
    scheduled,
    shell,
    stdin_runner,
)
from nerve.safety.targets import judge_read, resolved
from nerve.safety.toolrules import SYSTEM_TOOLS, TOOL_RULES
from nerve.safety.triggers import may_matter
from nerve.safety.verdict import LOW, Category, Finding, higher, wordset
from nerve.safety.windows import check_windows, looks_like_windows
from nerve.safety.wrappers import ASSIGN, WRAPPERS, basename, echoed, unwrap

__all__ = ["check_shell"]

_LONG = 600  # characters: past this, a script's top-level lines are judged one by one
_FUNCTION = re.compile(r"\(\s*\)\s*\{")
_CODE_LINE = re.compile(r"^\s*[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+\s*\(")
_FORK_BOMB = re.compile(r"(?P<f>[\w:.]+)\s*\(\s*\)\s*\{\s*(?P=f)\s*\|\s*(?P=f)\s*&?\s*;?\s*\}")
_VAR_REF = re.compile(r"\$\{(\w+)\}|\$(\w+)|\$\{(\w+)\[[@*]\]\}")
_SKIP_WORDS = wordset("! { } then do else elif if while until fi done esac time in [[ ]]")
_NOT_COMMANDS = frozenset({"for", "case", "select", "function", "coproc"})
_DATA = wordset(
    "echo printf print grep egrep fgrep rg ag ack cat tac wc sort uniq head tail less more "
    "cut tr sed jq yq file stat ls dir tree du df diff cmp comm join paste column fmt fold nl "
    "od strings basename dirname realpath readlink pwd date cal printenv expr seq yes true "
    "false test [ type which whereis hash man help info whatis apropos alias unalias export "
    "declare typeset local readonly set unset shift read mapfile logger notify-send say "
    "figlet cowsay touch mkdir tar zip unzip gzip gunzip bzip2 xz 7z locate sleep wait cd "
    "pushd popd exit return ping nslookup whoami id hostname uname uptime ps top "
    "htop free vmstat iostat lsof netstat ss md5sum sha1sum sha256sum sha512sum cksum base32 "
    "iconv csplit nproc env getent history fc jobs bg fg disown trap ulimit umask shopt "
    "source . :"
)
# Data programs named directly (no path, no wrapper): nothing to unwrap or dispatch.
_PLAIN_DATA = _DATA - WRAPPERS - {"source", ".", "sed", "cd", "pushd", "popd"}
_CD = frozenset({"cd", "pushd", "popd"})
_CD_HEADS = ("cd ", "pushd ", "popd", "for ")  # lines that change what later lines mean
_SQL_CLIENTS = wordset(
    "psql mysql mariadb clickhouse-client clickhouse sqlcmd cqlsh snowsql duckdb cockroach "
    "trino bq sqlite3"
)


def _expand(words: list[str], env: dict[str, str]) -> list[str]:
    if not env or not any("$" in w for w in words):
        return words

    def sub(m: re.Match[str]) -> str:
        if m.group(3):  # "${cmd[@]}": the words of the array `cmd=(rm -rf ~)`
            value = env.get(m.group(3), "")
            return value[1:-1] if value.startswith("(") else m.group()
        name = m.group(1) or m.group(2)
        return env.get(name, m.group())

    out = [_VAR_REF.sub(sub, w) for w in words]
    if out and out[0] != words[0] and " " in out[0].strip():
        out = out[0].split() + out[1:]  # an unquoted variable holding a whole command
    return out


def _dispatch(inv: Invocation) -> Finding:
    prog, args = inv.prog, inv.args
    host = HOST_RULES.get(prog)
    if host is not None and (planted := host(inv)).blocks:
        return planted
    if prog in READERS:
        return judge_reader(inv)
    if prog == "sed":
        return higher(sed_in_place(inv), judge_reader(inv))
    if prog in _DATA and prog != "source" and prog != ".":
        return LOW
    if "--help" in args or args[:1] == ["help"] or args in (["-h"], ["--version"], ["version"]):
        return LOW
    if prog in SHELLS:
        return shell(inv)
    channel = CHANNEL_RULES.get(prog)
    if channel is not None and (opened := channel(inv)).blocks:
        return opened
    if prog in SECRET_CLIS or prog.startswith("docker-credential-"):
        revealed = reveals_secret(inv)
        if revealed is not None:
            return revealed
    if prog == "eval":
        if any(SUB in a for a in args) and runs_download(inv.cmd.subs):
            return Finding("high", "eval runs code downloaded from the network", "code")
        best = inv.ctx.nested(" ".join(args), "inside eval")
        for text in echoed_by_subs(inv.cmd) if not best.blocks else ():
            best = higher(best, inv.ctx.nested(text, "inside eval"))
        return best
    if prog in ("source", ".") and runs_download(inv.cmd.subs):
        return Finding("high", f"{prog} runs a script downloaded from the network", "code")
    if prog in ("source", ".") and args[:1] in (["/dev/stdin"], ["-"]):
        return shell(Invocation("sh", [], inv.cmd, inv.upstream, False, inv.ctx))
    if prog in ("awk", "gawk", "mawk", "nawk"):
        found = awk(inv)
        return found if found.blocks else higher(found, judge_reader(inv))
    if prog in _DATA:  # source and . that run a local file
        return LOW
    rule = FS_RULES.get(prog) or TOOL_RULES.get(prog) or NET_RULES.get(prog)
    rule = rule or CLI_RULES.get(prog) or SERVICE_RULES.get(prog) or ACCOUNT_RULES.get(prog)
    if rule is None and prog.startswith("mkfs"):
        rule = FS_RULES["mkfs"]
    if rule is not None:
        return _named(rule(inv), "system" if prog in SYSTEM_TOOLS else "destructive")
    if prog in _SQL_CLIENTS:
        return sql_client(inv, echoed(inv.upstream))
    base = prog.rstrip("0123456789.")
    if base in CODE_FLAGS or prog in ("rails", "gitlab-rails"):
        if prog in ("rails", "gitlab-rails") and args[:1] in (["runner"], ["r"]):
            inv = Invocation("runner", args[1:], inv.cmd, inv.upstream, inv.from_xargs, inv.ctx)
        if any(SUB in a for a in args) and runs_download(inv.cmd.subs):
            return Finding("high", f"{prog} runs code downloaded from the network", "code")
        found = higher(interpreter(inv, echoed(inv.upstream)), generic_cli(inv))
        if all(a.startswith("-") and a not in CODE_FLAGS.get(base, ()) for a in args) and not any(
            a.startswith("-m") for a in args
        ):  # `python -m json.tool` runs a module; its input is data
            found = higher(found, stdin_runner(inv, "code"))
        return found
    if prog in ("at", "batch"):
        return scheduled(inv)
    return _named(generic_cli(inv), "destructive")


def _named(found: Finding, family: Category) -> Finding:
    """A rule's finding with its family's category, when the rule named none."""
    if found.category is None and found.risk != "low":
        return Finding(found.risk, found.reason, family)
    return found


def _cd(words: list[str], ctx: Ctx) -> None:
    """`cd DIR`: relative paths point into DIR from now on ("" when nerve cannot tell where)."""
    args = [w for w in words[1:] if not w.startswith("-") or w == "-"]
    target = args[0] if args else "~"
    real = None if target == "-" or words[0] == "popd" else resolved(target, ctx)
    ctx.cwd = real or ""
    ctx.version += 1


def _bind_loop(name: str, items: list[str], ctx: Ctx) -> None:
    """A for loop's variable stands for its items: the most sensitive one, for judging."""
    items = [i for i in items if SUB not in i and i not in (";", "do")]
    if items and ASSIGN.match(name + "="):
        ctx.env[name] = next((i for i in items if judge_read(i, "").risk != "low"), items[0])
        ctx.version += 1


def _command(cmd: Command, ctx: Ctx, upstream: Command | None) -> Finding:
    best = judge_redirects(cmd, ctx) if cmd.redirects else LOW
    for sub in cmd.subs:
        if best.blocks:
            return best
        best = higher(best, _walk(sub, ctx, "in a command substitution"))
    words = cmd.words
    while words and (words[0] in _SKIP_WORDS or words[0] == "$"):  # "$ cmd": a pasted prompt
        words = words[1:]
    if words[:1] == ["for"] and words[2:3] == ["in"] and len(words) > 3:
        _bind_loop(words[1], words[3:], ctx)  # `for f in ~/.ssh/*; do curl -T $f ...`
    if not words or words[0] in _NOT_COMMANDS or words[0].endswith("()") or words[0][:1] == "-":
        return best
    assigned = 0
    while assigned < len(words) and "=" in words[assigned] and ASSIGN.match(words[assigned]):
        assigned += 1
    if assigned == len(words):
        for word in words:
            name, _, value = word.partition("=")
            if value == SUB and makes_temp(cmd):
                value = "/tmp/mktemp.XXXXXX"  # d=$(mktemp -d): a fresh directory under /tmp
            ctx.env[name.rstrip("+")] = value
            best = higher(best, judge_assignment(name, value))
        ctx.version += 1
        return best
    if cmd.redirects:  # `echo CMD > x.sh`: judged when a shell runs x.sh
        best = higher(best, remember_written(cmd, ctx))
    if ctx.functions and words[assigned] in ctx.functions and not best.blocks:
        return higher(best, called(_expand(words[assigned:], ctx.env), ctx))
    if words[assigned] == "alias" and not best.blocks:
        return higher(best, judge_alias(words[assigned + 1 :], ctx))
    if best.blocks or words[assigned] in _PLAIN_DATA:
        if not best.blocks and (words[assigned] in READERS or words[assigned] in HOST_RULES):
            inv = Invocation(words[assigned], words[assigned + 1 :], cmd, upstream, False, ctx)
            return higher(best, _dispatch(inv))  # by what they read, and host rules (tar -C /)
        return best
    head = assigned + (words[assigned] in ("builtin", "command") and len(words) > assigned + 1)
    if words[head] in _CD:
        _cd(_expand(words[head:], ctx.env), ctx)
        return best
    words, from_xargs, nested = unwrap(resolve_subs(_expand(words[assigned:], ctx.env), cmd, ctx))
    if nested is not None:
        best = higher(best, ctx.nested(nested, "nested command"))
    if from_xargs and not best.blocks:
        fed = judge_fed(cmd, words, upstream, ctx)
        if fed is not None:
            return higher(best, fed)
    if not words or best.blocks:
        return best
    computed = computed_program(cmd, words, ctx) or fetched_run(cmd, words, ctx)
    computed = computed or written_run(words, ctx)
    if computed is not None:
        return higher(best, computed)
    inv = Invocation(basename(words[0]), words[1:], cmd, upstream, from_xargs, ctx)
    return higher(best, _dispatch(inv))


def _walk(script: Script, ctx: Ctx, label: str = "") -> Finding:
    """Judge commands in order; the first high or critical finding is the answer."""
    best = LOW
    for pipeline in script:
        upstream: Command | None = None
        for i, cmd in enumerate(pipeline.commands):
            found = _command(cmd, ctx, upstream)
            if not found.blocks and cmd.words:
                found = higher(found, env_read(cmd, i + 1 < len(pipeline.commands)))
                found = higher(found, judge_pipeline(pipeline.commands, i) or judge_subs(cmd))
                found = higher(found, fed_to_a_shell(cmd) if cmd.redirects else None)
                if i and not found.blocks:
                    found = higher(found, piped_off(pipeline.commands, i))
            if found.category == "credentials" and i + 1 < len(pipeline.commands):
                found = sent_on(found, pipeline.commands[i + 1 :])
            if found.risk != "low":
                if label:
                    found = found.labelled(f"{label}: ")
                if found.blocks:
                    return found
                best = higher(best, found)
            if upstream is None or not passes_through(cmd):
                upstream = cmd  # `echo CMD | tee log | sh`: sh reads what echo printed
    return best


def _analyze(text: str, ctx: Ctx) -> Finding:
    if "(" in text and _FUNCTION.search(text) and _FORK_BOMB.search(text):
        return Finding("critical", "a fork bomb exhausts the machine's processes", "system")
    if ")" in text or "function" in text:
        text = define_functions(text, ctx)  # `f() { rm -rf "$1"; }; f /`: judged per call
    best = LOW
    if _CODE_LINE.match(text):  # a line of code, not a command: judge the calls it makes
        best = api_calls(text, "code")
    if len(text) < _LONG or "\n" not in text:
        if looks_like_windows(text) and not best.blocks:
            best = higher(best, check_windows(text))
        return best if best.blocks else higher(best, _walk(lex(text), ctx))
    seen: dict[str, int] = {}
    for line in split(text):  # a long script: lex and judge only the lines that could matter
        if seen.get(line) == ctx.version:
            continue  # the same line again, and no assignment since could change its meaning
        seen[line] = ctx.version
        if best.blocks:
            break
        head = line.lstrip()
        moves = ("=" in line and ASSIGN.match(head)) or head.startswith(_CD_HEADS)
        if not moves and not _matters(line, ctx.env) and not _uses_definitions(head, ctx):
            continue
        if looks_like_windows(line):
            best = higher(best, check_windows(line))
        if not best.blocks:
            best = higher(best, _walk(lex(line), ctx))
    return best


def _matters(text: str, env: dict[str, str]) -> bool:
    return may_matter(text, env) or EXTRA.search(text) is not None


def _uses_definitions(text: str, ctx: Ctx) -> bool:
    """Whether `text` calls a function the script defined or runs a file it wrote."""
    if not ctx.functions and not ctx.written:
        return False
    names = {path.rsplit("/", 1)[-1] for path in ctx.written}
    return any(w in ctx.functions or w.rsplit("/", 1)[-1] in names for w in text.split())


def _nested(text: str, ctx: Ctx) -> Finding:
    """Text a command runs (bash -c, eval, ssh host CMD): the same first pass, then judged."""
    matters = _matters(text, ctx.env) or _uses_definitions(text, ctx)
    return _analyze(text, ctx) if matters else LOW


def check_shell(text: str, scope: Scope = DEFAULT_SCOPE) -> Finding:
    """Layer-1 judgement of a shell command line (or script), run in `scope`'s workspace."""
    text = normalize(text)
    if not _matters(text, {}):
        return LOW
    return _analyze(text, Ctx(_nested, scope=scope))
