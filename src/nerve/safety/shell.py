"""Shell commands, judged by what they would run: parse, don't grep.

A cheap first pass (triggers.may_matter on a folded copy) lets text with no dangerous word
through. Everything else is lexed (lexer.py) and walked: wrappers are stripped (sudo, env X=1,
nohup, nice -n 5, timeout 10, xargs, /usr/bin/...), nested code is followed (`bash -c`, `eval`,
`$( )`, backticks, here-documents fed to a shell, `curl | sh`, `ssh host CMD`, `python -c`), and
each real program is judged by a rule that knows it (fsrules, toolrules, clirules, servicerules,
inline) or by the generic subcommand rule. Arguments of echo, grep, commit messages and
here-documents fed to cat are data and never judged as commands.

The first blocking finding is the verdict; a long script is judged line by line (segments.py).
"""

from __future__ import annotations

import re

from nerve.safety.accountrules import ACCOUNT_RULES
from nerve.safety.clirules import CLI_RULES, generic_cli, sql_client
from nerve.safety.computed import computed_program, fetched_run
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
from nerve.safety.pipelines import EXTRA, judge_pipeline, judge_subs, makes_temp, printed_code
from nerve.safety.readers import READERS, judge_reader
from nerve.safety.redirects import judge_redirects
from nerve.safety.scope import DEFAULT_SCOPE, Scope
from nerve.safety.secretrules import SECRET_CLIS, env_read, reveals_secret
from nerve.safety.segments import split
from nerve.safety.servicerules import SERVICE_RULES
from nerve.safety.targets import resolved
from nerve.safety.toolrules import SYSTEM_TOOLS, TOOL_RULES
from nerve.safety.triggers import may_matter
from nerve.safety.verdict import LOW, Category, Finding, higher, wordset
from nerve.safety.windows import check_windows, looks_like_windows
from nerve.safety.wrappers import ASSIGN, WRAPPERS, basename, echoed, prog_of, unwrap

__all__ = ["check_shell"]

_LONG = 600  # characters: past this, a script's top-level lines are judged one by one
_FUNCTION = re.compile(r"\(\s*\)\s*\{")
_CODE_LINE = re.compile(r"^\s*[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+\s*\(")
_FORK_BOMB = re.compile(r"(?P<f>[\w:.]+)\s*\(\s*\)\s*\{\s*(?P=f)\s*\|\s*(?P=f)\s*&?\s*;?\s*\}")
_VAR_REF = re.compile(r"\$\{(\w+)\}|\$(\w+)")
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
_CD_HEADS = ("cd ", "pushd ", "popd")
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh"})
_DOWNLOADERS = wordset("curl wget fetch aria2c http https xh nc ncat netcat socat telnet ssh")
_DECODERS = wordset("base64 base32 xxd openssl uudecode rev gunzip zcat gzip bzip2 xz unxz zstd")
_SQL_CLIENTS = wordset(
    "psql mysql mariadb clickhouse-client clickhouse sqlcmd cqlsh snowsql duckdb cockroach "
    "trino bq sqlite3"
)


def _expand(words: list[str], env: dict[str, str]) -> list[str]:
    if not env or not any("$" in w for w in words):
        return words

    def sub(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2)
        return env.get(name, m.group())

    out = [_VAR_REF.sub(sub, w) for w in words]
    if out and out[0] != words[0] and " " in out[0].strip():
        out = out[0].split() + out[1:]  # an unquoted variable holding a whole command
    return out


def _runs_download(scripts: list[Script]) -> bool:
    for script in scripts:
        for pipeline in script:
            for cmd in pipeline.commands:
                if prog_of(cmd)[0] in _DOWNLOADERS or _runs_download(cmd.subs):
                    return True
    return False


def _stdin_runner(inv: Invocation, kind: str) -> Finding | None:
    """A shell or interpreter reading code from a pipe: judge where the code comes from."""
    src, _ = prog_of(inv.upstream)
    if not src:
        return None
    if src in _DOWNLOADERS or _runs_download(inv.upstream.subs if inv.upstream else []):
        by = src if src in _DOWNLOADERS else f"a substitution in {src}"
        return Finding("high", f"code downloaded by {by} is piped into {inv.prog}", "code")
    if src in _DECODERS:
        return Finding("high", f"a payload decoded by {src} is piped into {inv.prog}", "code")
    if src in ("echo", "printf"):
        return None  # judged as text by the caller
    for text in printed_code(inv.upstream):
        found = inv.ctx.nested(text, f"code printed by {src} for {inv.prog}")
        if found.blocks:
            return found
    return Finding("medium", f"{inv.prog} runs {kind} read from a pipe", "code")


def _echoed_by_subs(cmd: Command) -> list[str]:
    """What `$(echo ...)` substitutions in this command print: code, for eval and sh -c."""
    texts = []
    for script in cmd.subs:
        for pipeline in script:
            text = echoed(pipeline.commands[-1]) if pipeline.commands else None
            if text:
                texts.append(text)
    return texts


def _fed(inv: Invocation, best: Finding, fed: str, piped_label: str) -> Finding:
    """Judge the text a program reads as a script: here-documents, then what is echoed into it."""
    for red in inv.cmd.redirects:
        if red.op in ("<<", "<<-", "<<<"):
            best = higher(best, inv.ctx.nested(red.target, fed))
    piped = echoed(inv.upstream)
    if piped is not None and not best.blocks:
        best = higher(best, inv.ctx.nested(piped, piped_label))
    return best


def _shell(inv: Invocation) -> Finding:
    args, i, code_mode = inv.args, 0, False
    while i < len(args) and args[i][:1] in ("-", "+") and args[i] != "-":
        if args[i] in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            i += 1
        elif not args[i].startswith("--") and "c" in args[i][1:]:
            code_mode = True
        i += 1
    rest = args[i:]
    if code_mode:
        if rest and SUB in rest[0] and _runs_download(inv.cmd.subs):
            why = f"{inv.prog} -c runs code downloaded from the network"
            return Finding("high", why, "code")
        best = inv.ctx.nested(rest[0] if rest else "", f"inside `{inv.prog} -c`")
        for text in _echoed_by_subs(inv.cmd) if not best.blocks else ():
            best = higher(best, inv.ctx.nested(text, f"inside `{inv.prog} -c`"))
        return best
    if rest and rest[0] != "-":
        if SUB in rest[0] and _runs_download(inv.cmd.subs):
            why = f"{inv.prog} runs a script downloaded from the network"
            return Finding("high", why, "code")
        return LOW  # a script file we cannot see
    best = _fed(inv, LOW, f"script fed to {inv.prog}", f"text piped into {inv.prog}")
    return higher(best, _stdin_runner(inv, "a script"))


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
    if prog in _SHELLS:
        return _shell(inv)
    channel = CHANNEL_RULES.get(prog)
    if channel is not None and (opened := channel(inv)).blocks:
        return opened
    if prog in SECRET_CLIS or prog.startswith("docker-credential-"):
        revealed = reveals_secret(inv)
        if revealed is not None:
            return revealed
    if prog == "eval":
        if any(SUB in a for a in args) and _runs_download(inv.cmd.subs):
            return Finding("high", "eval runs code downloaded from the network", "code")
        best = inv.ctx.nested(" ".join(args), "inside eval")
        for text in _echoed_by_subs(inv.cmd) if not best.blocks else ():
            best = higher(best, inv.ctx.nested(text, "inside eval"))
        return best
    if prog in ("source", ".") and _runs_download(inv.cmd.subs):
        return Finding("high", f"{prog} runs a script downloaded from the network", "code")
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
        if any(SUB in a for a in args) and _runs_download(inv.cmd.subs):
            return Finding("high", f"{prog} runs code downloaded from the network", "code")
        found = higher(interpreter(inv, echoed(inv.upstream)), generic_cli(inv))
        if all(a.startswith("-") and a not in CODE_FLAGS.get(base, ()) for a in args) and not any(
            a.startswith("-m") for a in args
        ):  # `python -m json.tool` runs a module; its input is data
            found = higher(found, _stdin_runner(inv, "code"))
        return found
    if prog in ("at", "batch"):
        return _scheduled(inv)
    return _named(generic_cli(inv), "destructive")


def _scheduled(inv: Invocation) -> Finding:
    """`at now`, `batch`: run the commands they read later, as a shell would now."""
    best = LOW
    if "-f" in inv.args:
        best = Finding("medium", f"{inv.prog} schedules a script to run later", "persistence")
    best = _fed(inv, best, f"scheduled by {inv.prog}", f"scheduled by {inv.prog}")
    piped = echoed(inv.upstream)
    if not best.blocks and inv.upstream is not None and piped is None:
        best = higher(best, _stdin_runner(inv, "commands"))
    return best


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


def _command(cmd: Command, ctx: Ctx, upstream: Command | None) -> Finding:
    best = judge_redirects(cmd, ctx) if cmd.redirects else LOW
    for sub in cmd.subs:
        if best.blocks:
            return best
        best = higher(best, _walk(sub, ctx, "in a command substitution"))
    words = cmd.words
    while words and (words[0] in _SKIP_WORDS or words[0] == "$"):  # "$ cmd": a pasted prompt
        words = words[1:]
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
    if best.blocks or words[assigned] in _PLAIN_DATA:
        if not best.blocks and (words[assigned] in READERS or words[assigned] in HOST_RULES):
            inv = Invocation(words[assigned], words[assigned + 1 :], cmd, upstream, False, ctx)
            return higher(best, _dispatch(inv))  # by what they read, and host rules (tar -C /)
        return best
    if words[assigned] in _CD:
        _cd(_expand(words[assigned:], ctx.env), ctx)
        return best
    words, from_xargs, nested = unwrap(_expand(words[assigned:], ctx.env))
    if nested is not None:
        best = higher(best, ctx.nested(nested, "nested command"))
    if from_xargs and not best.blocks:
        fed = judge_fed(cmd, words, upstream, ctx)
        if fed is not None:
            return higher(best, fed)
    if not words or best.blocks:
        return best
    computed = computed_program(cmd, words, ctx) or fetched_run(cmd, words, ctx)
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
            upstream = cmd
    return best


def _analyze(text: str, ctx: Ctx) -> Finding:
    if "(" in text and _FUNCTION.search(text) and _FORK_BOMB.search(text):
        return Finding("critical", "a fork bomb exhausts the machine's processes", "system")
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
        if not moves and not _matters(line, ctx.env):
            continue
        if looks_like_windows(line):
            best = higher(best, check_windows(line))
        if not best.blocks:
            best = higher(best, _walk(lex(line), ctx))
    return best


def _matters(text: str, env: dict[str, str]) -> bool:
    return may_matter(text, env) or EXTRA.search(text) is not None


def _nested(text: str, ctx: Ctx) -> Finding:
    """Text a command runs (bash -c, eval, ssh host CMD): the same first pass, then judged."""
    return _analyze(text, ctx) if _matters(text, ctx.env) else LOW


def check_shell(text: str, scope: Scope = DEFAULT_SCOPE) -> Finding:
    """Layer-1 judgement of a shell command line (or script), run in `scope`'s workspace."""
    text = normalize(text)
    if not _matters(text, {}):
        return LOW
    return _analyze(text, Ctx(_nested, scope=scope))
