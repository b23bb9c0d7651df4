"""Shell commands, judged by what they would run: parse, don't grep.

A cheap first pass (one regular expression on a folded copy) lets text with no dangerous word
through. Everything else is lexed (lexer.py) and walked: wrappers are stripped (sudo, env X=1,
nohup, nice -n 5, timeout 10, xargs, /usr/bin/...), nested code is followed (`bash -c`, `eval`,
`$( )`, backticks, here-documents fed to a shell, `curl | sh`, `ssh host CMD`, `python -c`), and
each real program is judged by a rule that knows it (fsrules, toolrules, clirules, inline) or by
the generic subcommand rule. Arguments of echo, grep, commit messages and here-documents fed to
cat are data and never judged as commands.
"""

from __future__ import annotations

import re
from shlex import split as shlex_split

from nerve.safety.clirules import CLI_RULES, HIGH_VERBS, MEDIUM_VERBS, generic_cli, sql_client
from nerve.safety.fsrules import FS_RULES, judge_redirects
from nerve.safety.inline import CODE_FLAGS, api_calls, awk, interpreter
from nerve.safety.invocation import Ctx, Invocation
from nerve.safety.lexer import SUB, Command, Script, lex
from nerve.safety.normalize import fold, normalize
from nerve.safety.toolrules import TOOL_RULES
from nerve.safety.verdict import LOW, Finding, higher, wordset
from nerve.safety.windows import check_windows, looks_like_windows

__all__ = ["check_shell"]

_PROGRAMS = wordset(
    "rm srm rmdir unlink shred dd mke2fs mkswap wipefs fdisk sfdisk gdisk sgdisk parted "
    "blkdiscard chmod chown chgrp chattr setfacl find mv cp install truncate tee git docker "
    "podman nerdctl kubectl oc helm terraform tofu terragrunt pulumi cdk aws gcloud gsutil az "
    "azcopy psql mysql mariadb mysqladmin sqlite3 redis-cli mongo mongosh clickhouse sqlcmd "
    "cqlsh curl wget http https xh shutdown reboot halt poweroff init telinit systemctl "
    "service killall5 pkill crontab userdel deluser groupdel delgroup iptables nft ufw rsync "
    "rclone scp ssh eval source exec su pypy perl ruby node nodejs php deno bun lua osascript "
    "runner awk gawk sh bash zsh dash ksh mksh fish busybox xargs powershell pwsh cmd nginx "
    "format del rd erase diskpart vssadmin wmic bcdedit reg cipher watch flock base64 xxd "
    "sync"
)
_WORDS = _PROGRAMS | HIGH_VERBS | MEDIUM_VERBS
_TRIGGER = re.compile(
    r"(?<![a-z0-9])(?:python[\d.]*|mkfs\S*|"
    + "|".join(sorted((w for w in _WORDS if len(w) < 5), key=len, reverse=True))
    + r")(?![a-z0-9])|"
    + "|".join(sorted((w for w in _WORDS if len(w) >= 5), key=len, reverse=True))
    + r"|delet|remov|purg|terminat|truncat|deregist|unregist|revok|unsubscrib|initialize-disk|"
    r">\s*/|\(\s*\)\s*\{|\$\{?\w+\}?\s|\$'|\$env:"
)
_LONG = 600  # characters: past this, independent lines are judged one by one
_FUNCTION = re.compile(r"\(\s*\)\s*\{")
_CODE_LINE = re.compile(r"^\s*[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+\s*\(")
_FORK_BOMB = re.compile(r"(?P<f>[\w:.]+)\s*\(\s*\)\s*\{\s*(?P=f)\s*\|\s*(?P=f)\s*&?\s*;?\s*\}")
_ASSIGN = re.compile(r"^[A-Za-z_]\w*(?:\[[^]]*\])?\+?=")
_VAR_REF = re.compile(r"\$\{(\w+)\}|\$(\w+)")
_SKIP_WORDS = wordset("! { } then do else elif if while until fi done esac time in [[ ]]")
_NOT_COMMANDS = frozenset({"for", "case", "select", "function", "coproc"})
_DATA = wordset(
    "echo printf print grep egrep fgrep rg ag ack cat tac wc sort uniq head tail less more "
    "cut tr sed jq yq file stat ls dir tree du df diff cmp comm join paste column fmt fold nl "
    "od strings basename dirname realpath readlink pwd date cal printenv expr seq yes true "
    "false test [ type which whereis hash man help info whatis apropos alias unalias export "
    "declare typeset local readonly set unset shift read mapfile logger notify-send say "
    "figlet cowsay touch mkdir ln tar zip unzip gzip gunzip bzip2 xz 7z locate sleep wait cd "
    "pushd popd exit return ping dig host nslookup whoami id hostname uname uptime ps top "
    "htop free vmstat iostat lsof netstat ss md5sum sha1sum sha256sum sha512sum cksum base32 "
    "iconv csplit nproc env getent history fc jobs bg fg disown trap ulimit umask shopt "
    "source . :"
)
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh"})
_DOWNLOADERS = frozenset({"curl", "wget", "fetch", "aria2c", "http", "https", "xh", "nc", "ncat"})
_DECODERS = frozenset({"base64", "base32", "xxd", "openssl", "uudecode", "rev", "gunzip", "zcat"})
_SQL_CLIENTS = wordset(
    "psql mysql mariadb clickhouse-client clickhouse sqlcmd cqlsh snowsql duckdb cockroach "
    "trino bq sqlite3"
)
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
    "xargs": wordset("-I -i -n -P -d -L -l -s -E -e -a --max-args --max-procs --delimiter"),
    "parallel": frozenset(
        ["-j", "-P", "-n", "-N", "-S", "-I", "--jobs", "--max-args", "--sshlogin"]
    ),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "flock": frozenset({"-w", "-E", "--timeout", "--conflict-exit-code"}),
    "runuser": frozenset({"-u", "-g", "-G", "--user", "--group"}),
    "watch": frozenset({"-n", "--interval", "-d"}),
}
_TAKES_ONE_POSITIONAL = frozenset({"timeout", "chroot", "flock"})


def _basename(word: str) -> str:
    name = word.rsplit("/", 1)[-1].rsplit("\\", 1)[-1].lower()
    return name.removesuffix(".exe")


def _unwrap(words: list[str]) -> tuple[list[str], bool, str | None]:
    """Strip wrappers: (the real command words, arguments also come from xargs, nested text)."""
    from_xargs = False
    while words:
        name = _basename(words[0])
        if name in ("su", "sg") and "-c" in words:
            return [], from_xargs, " ".join(words[words.index("-c") + 1 :])
        if name == "watch":
            rest = _skip_options(words[1:], _WRAPPERS["watch"])
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
        rest = _skip_options(words[1:], _WRAPPERS[name])
        while rest and _ASSIGN.match(rest[0]):
            rest = rest[1:]
        if name in _TAKES_ONE_POSITIONAL and rest:
            rest = rest[1:]
        words = rest
    return words, from_xargs, None


def _skip_options(args: list[str], takes_value: frozenset[str]) -> list[str]:
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            return args[i + 1 :]
        if not arg.startswith("-") or arg == "-":
            break
        i += 2 if arg.split("=", 1)[0] in takes_value and "=" not in arg else 1
    return args[i:]


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


def _prog_of(cmd: Command | None) -> tuple[str, list[str]]:
    if cmd is None:
        return "", []
    words, _, _ = _unwrap([w for w in cmd.words if not _ASSIGN.match(w)])
    return (_basename(words[0]), words[1:]) if words else ("", [])


def _runs_download(scripts: list[Script]) -> bool:
    for script in scripts:
        for pipeline in script:
            for cmd in pipeline.commands:
                if _prog_of(cmd)[0] in _DOWNLOADERS or _runs_download(cmd.subs):
                    return True
    return False


def _stdin_runner(inv: Invocation, kind: str) -> Finding | None:
    """A shell or interpreter reading code from a pipe: judge where the code comes from."""
    src, _ = _prog_of(inv.upstream)
    if not src:
        return None
    if src in _DOWNLOADERS:
        return Finding("high", f"code downloaded by {src} is piped into {inv.prog}")
    if src in _DECODERS:
        return Finding("high", f"a payload decoded by {src} is piped into {inv.prog}")
    if src in ("echo", "printf"):
        return None  # judged as text by the caller
    return Finding("medium", f"{inv.prog} runs {kind} read from a pipe")


def _echoed(upstream: Command | None) -> str | None:
    src, args = _prog_of(upstream)
    if src in ("echo", "printf"):
        return " ".join(a for a in args if not (src == "echo" and a in ("-e", "-n", "-E")))
    return None


def _echoed_by_subs(cmd: Command) -> list[str]:
    """What `$(echo ...)` substitutions in this command print: code, for eval and sh -c."""
    texts = []
    for script in cmd.subs:
        for pipeline in script:
            text = _echoed(pipeline.commands[-1]) if pipeline.commands else None
            if text:
                texts.append(text)
    return texts


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
            return Finding("high", f"{inv.prog} -c runs code downloaded from the network")
        best = inv.ctx.nested(rest[0] if rest else "", f"inside `{inv.prog} -c`")
        for text in _echoed_by_subs(inv.cmd):
            best = higher(best, inv.ctx.nested(text, f"inside `{inv.prog} -c`"))
        return best
    if rest and rest[0] != "-":
        if SUB in rest[0] and _runs_download(inv.cmd.subs):
            return Finding("high", f"{inv.prog} runs a script downloaded from the network")
        return LOW  # a script file we cannot see
    best = LOW
    for red in inv.cmd.redirects:
        if red.op in ("<<", "<<-", "<<<"):
            best = higher(best, inv.ctx.nested(red.target, f"script fed to {inv.prog}"))
    echoed = _echoed(inv.upstream)
    if echoed is not None:
        best = higher(best, inv.ctx.nested(echoed, f"text piped into {inv.prog}"))
    return higher(best, _stdin_runner(inv, "a script"))


def _dispatch(inv: Invocation) -> Finding:
    prog, args = inv.prog, inv.args
    if "--help" in args or args[:1] == ["help"] or args in (["-h"], ["--version"], ["version"]):
        return LOW
    if prog in _SHELLS:
        return _shell(inv)
    if prog == "eval":
        if any(SUB in a for a in args) and _runs_download(inv.cmd.subs):
            return Finding("high", "eval runs code downloaded from the network")
        best = inv.ctx.nested(" ".join(args), "inside eval")
        for text in _echoed_by_subs(inv.cmd):
            best = higher(best, inv.ctx.nested(text, "inside eval"))
        return best
    if prog in ("source", ".") and _runs_download(inv.cmd.subs):
        return Finding("high", f"{prog} runs a script downloaded from the network")
    if prog in ("awk", "gawk", "mawk", "nawk"):
        return awk(inv)
    if prog in _DATA:
        return LOW
    rule = FS_RULES.get(prog) or TOOL_RULES.get(prog) or CLI_RULES.get(prog)
    if rule is None and prog.startswith("mkfs"):
        rule = FS_RULES["mkfs"]
    if rule is not None:
        return rule(inv)
    if prog in _SQL_CLIENTS:
        return sql_client(inv, _echoed(inv.upstream))
    base = prog.rstrip("0123456789.")
    if base in CODE_FLAGS or prog in ("rails", "gitlab-rails"):
        if prog in ("rails", "gitlab-rails") and args[:1] in (["runner"], ["r"]):
            inv = Invocation("runner", args[1:], inv.cmd, inv.upstream, inv.from_xargs, inv.ctx)
        found = higher(interpreter(inv, _echoed(inv.upstream)), generic_cli(inv))
        if all(a.startswith("-") and a not in CODE_FLAGS.get(base, ()) for a in args):
            found = higher(found, _stdin_runner(inv, "code"))
        return found
    return generic_cli(inv)


def _command(cmd: Command, ctx: Ctx, upstream: Command | None) -> Finding:
    best = judge_redirects(cmd.redirects)
    for sub in cmd.subs:
        best = higher(best, _walk(sub, ctx, "in a command substitution"))
    words = cmd.words
    while words and (words[0] in _SKIP_WORDS or words[0] == "$"):  # "$ cmd": a pasted prompt
        words = words[1:]
    if not words or words[0] in _NOT_COMMANDS or words[0].endswith("()") or words[0][:1] == "-":
        return best
    assigned = 0
    while assigned < len(words) and _ASSIGN.match(words[assigned]):
        assigned += 1
    if assigned == len(words):
        for word in words:
            name, _, value = word.partition("=")
            ctx.env[name.rstrip("+")] = value
        return best
    words, from_xargs, nested = _unwrap(_expand(words[assigned:], ctx.env))
    if nested is not None:
        best = higher(best, ctx.nested(nested, "nested command"))
    if not words:
        return best
    inv = Invocation(_basename(words[0]), words[1:], cmd, upstream, from_xargs, ctx)
    return higher(best, _dispatch(inv))


def _walk(script: Script, ctx: Ctx, label: str = "") -> Finding:
    best = LOW
    for pipeline in script:
        upstream: Command | None = None
        for cmd in pipeline.commands:
            found = _command(cmd, ctx, upstream)
            if label and found.risk != "low":
                found = Finding(found.risk, f"{label}: {found.reason}")
            best = higher(best, found)
            if best.risk == "critical":
                return best
            upstream = cmd
    return best


def _independent_lines(text: str) -> list[str] | None:
    """The lines of a long script, when no quote, substitution or here-doc spans two of them."""
    if len(text) < _LONG or "\n" not in text or "<<" in text or "\\\n" in text:
        return None
    lines = text.split("\n")
    for line in lines:
        if (
            (line.count("'") - line.count("\\'")) % 2
            or (line.count('"') - line.count('\\"')) % 2
            or line.count("(") != line.count(")")
            or line.count("`") % 2
        ):
            return None
    return lines


def _analyze(text: str, ctx: Ctx) -> Finding:
    best = LOW
    if "(" in text and _FUNCTION.search(text) and _FORK_BOMB.search(text):
        return Finding("critical", "a fork bomb exhausts the machine's processes")
    if looks_like_windows(text):
        best = check_windows(text)
    if _CODE_LINE.match(text):  # a line of code, not a command: judge the calls it makes
        best = higher(best, api_calls(text, "code"))
    lines = _independent_lines(text)
    if lines is None:
        return higher(best, _walk(lex(text), ctx))
    seen: set[str] = set()
    for line in lines:  # a long script: lex and judge only the lines that could matter
        if line in seen and "=" not in line and "$" not in line:
            continue  # the same line again, with no assignment that could change its meaning
        seen.add(line)
        if _TRIGGER.search(fold(line)) or _ASSIGN.match(line.lstrip()):
            best = higher(best, _walk(lex(line), ctx))
            if best.risk == "critical":
                break
    return best


def check_shell(text: str) -> Finding:
    """Layer-1 judgement of a shell command line (or script)."""
    text = normalize(text)
    if not _TRIGGER.search(fold(text)):
        return LOW
    return _analyze(text, Ctx(_analyze))
