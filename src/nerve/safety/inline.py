"""Code handed to an interpreter inline: `python -c`, `perl -e`, `node -e`, `ruby -e`, `awk`.

Looked for in the code: shell-outs (`os.system('...')`, `execSync`, backticks), whose command
string is judged as shell; file deletion APIs (`shutil.rmtree`, `FileUtils.rm_rf`, `fs.rmSync`),
judged by their path like `rm`; writes (`open('/etc/passwd', 'a')`, `fs.appendFileSync`,
`file_put_contents`), judged by their path like `>>`; calls of destructive API methods
(`client.deleteIndex(...)`, `Project.destroy_all`); secrets named in string literals, read; and
code that both reads a secret (or the environment) and talks to the network, which sends it
(`requests.post(url, data=open('.env').read())`: `high`, exfiltration).
"""

from __future__ import annotations

import re

from nerve.safety.invocation import Invocation, positionals
from nerve.safety.targets import judge_delete, judge_read, judge_write
from nerve.safety.verdict import LOW, Finding, higher

__all__ = ["CODE_FLAGS", "api_calls", "awk", "check_code", "interpreter"]

CODE_FLAGS: dict[str, tuple[str, ...]] = {
    "python": ("-c",),
    "pypy": ("-c",),
    "perl": ("-e", "-E"),
    "ruby": ("-e",),
    "node": ("-e", "--eval", "-p", "--print"),
    "nodejs": ("-e", "--eval", "-p", "--print"),
    "bun": ("-e", "--eval"),
    "deno": ("eval",),
    "php": ("-r",),
    "lua": ("-e",),
    "osascript": ("-e",),
    "runner": (),  # rails runner CODE, gitlab-rails runner CODE
}
_STRING = r"""(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")"""
_SHELL_OUT = re.compile(
    r"(?:\bos\.(?:system|popen)|\bsubprocess\.\w+|\bexec(?:Sync)?|\bspawn(?:Sync)?|"
    r"\bsystem|\bshell_exec|\bpassthru|\bpopen|\bIO\.popen|%x)\s*\(\s*(?P<args>\[[^\]]*\]|"
    + _STRING
    + r")"
)
_BACKTICKS = re.compile(r"`([^`]+)`")
_DELETE = re.compile(
    r"(?:\b|(?=\)\.))(?P<fn>shutil\.rmtree|rmtree|os\.(?:remove|unlink|rmdir|removedirs)|unlink|"
    r"rmdir|FileUtils\.(?:rm_rf|rm_r|rm|rm_f|remove_dir|remove_entry(?:_secure)?|remove)|"
    r"File\.delete|fs\.(?:rmSync|rmdirSync|unlinkSync|rm|rmdir|unlink)|"
    r"\)\.(?:rmSync|rmdirSync|unlinkSync)|rimraf|remove_tree|"  # require('fs').rmSync(...)
    r"Path\s*\(\s*" + _STRING + r"\s*\)\s*\.(?:unlink|rmdir))\s*\(?\s*(?P<path>" + _STRING + r")?"
)
_NESTED_ARG = re.compile(r"\s*\(?\s*[\w.]+\s*\(\s*(" + _STRING + r")")
_RECURSIVE_FNS = (
    "rmtree",
    "rm_rf",
    "rm_r",
    "remove_dir",
    "rimraf",
    "remove_tree",
    "removedirs",
    "rmSync",
    "rmdirSync",
)
_API_CALL = re.compile(
    r"\.(?P<name>(?:delete|destroy|drop|purge|truncate|wipe|erase)\w*|"
    r"(?:clear|remove)[A-Z_]\w*|dropDatabase)\s*(?:\(|\b)"
)


# A socket opened in code, and a shell wired to it (dup2, pty.spawn, exec of /bin/sh).
_SOCKET = re.compile(
    r"socket\.socket|\bsocket\(|fsockopen|TCPSocket|net\.(?:connect|Socket|Dial)|IO::Socket"
    r"|create_connection|socket[\"']?\)?\.tcp\(|[\"']socket[\"']\)\.socket|\.connect\(\(|/inet/tcp/"
    r"|new\s+Socket\s*\(|TCPClient\("
)
# A shell wired to that socket, or commands read from it and run (`system$_ while<>`).
_SHELL_IO = re.compile(
    r"dup2|pty\.spawn|/bin/(?:ba|z|da)?sh\b|\bcmd\.exe|spawn\(\s*['\"](?:ba)?sh|system\s*\$_"
    r"|IO\.popen|os\.execute|exec\.Command|fdopen\(|\|&\s*getline|subprocess\.(?:call|Popen)"
    r"\(\s*\[?\s*['\"](?:ba)?sh"
)


# A file opened for writing, or written by a one-call API: (the path literal, the mode literal).
_WRITE = re.compile(
    r"\bopen\s*\(\s*(?P<path>" + _STRING + r")\s*,\s*(?P<mode>" + _STRING + r")|"
    r"(?:appendFileSync|writeFileSync|appendFile|writeFile|file_put_contents|File\.write|"
    r"IO\.write|File\.open)\s*\(\s*(?P<target>" + _STRING + r")"
)
_NETWORK = re.compile(
    r"requests\.(?:post|put|get|patch)|urllib|urlopen|http\.client|httpx|\bfetch\s*\(|axios|"
    r"https?\.request|Net::HTTP|curl_exec|socket|smtplib|aiohttp"
)
_ENVIRON = re.compile(r"os\.environ|process\.env\b|ENV\.to_h|\$_ENV|getenv\(\)")
_ANY_LITERAL = re.compile(r"""["']([^"'\s]*[./][^"'\s]*)["']""")


_WRITE_MODE = re.compile(r",\s*['\"][wax]\+?b?['\"]|appendFile|writeFile|file_put_contents")


def _writes(code: str, inv: Invocation) -> Finding:
    best = LOW
    for m in _WRITE.finditer(code):
        path, mode = m.group("path") or m.group("target"), m.group("mode")
        if path is None or (mode is not None and not set(_unquote(mode)) & set("wax+")):
            continue
        append = (mode is not None and "a" in mode) or "append" in code[m.start() : m.end()].lower()
        found = judge_write(_unquote(path), inv.ctx, f"{inv.prog} code", append=append)
        best = higher(best, found)
    if not best.blocks and _WRITE_MODE.search(code):  # open(expanduser('~/.bashrc'), 'a')
        for m in _PATH_LITERAL.finditer(code):
            found = judge_write(m.group(1), inv.ctx, f"{inv.prog} code", append=True)
            planted = found.blocks and found.category == "persistence"  # not a file read here
            best = higher(best, found if planted else LOW)
    return best


def _sends(code: str, prog: str) -> Finding:
    """Code that reads a secret file, or the whole environment, and talks to the network."""
    if not _NETWORK.search(code):
        return LOW
    if _ENVIRON.search(code) and ("dict(" in code or "json" in code or "str(" in code):
        return Finding("high", f"{prog} code sends the environment over the network",
                       "exfiltration")  # fmt: skip
    for m in _ANY_LITERAL.finditer(code):
        if judge_read(m.group(1), prog).risk != "low":
            why = f"{prog} code sends {m.group(1)} over the network"
            return Finding("high", why, "exfiltration")
    return LOW


def _unquote(literal: str) -> str:
    return literal[1:-1] if literal[:1] in ("'", '"') else literal


# Processes forking without end: `fork while fork`, `while True: os.fork()`, `for(;;)fork();`
_FORK_LOOP = re.compile(
    r"fork\s+while\s+fork|while\s*\(?\s*(?:True|1|true)\s*\)?\s*:?\s*\{?\s*(?:os\.)?fork\s*\("
    r"|for\s*\(\s*;\s*;\s*\)\s*\{?\s*(?:pcntl_)?fork\s*\(|loop\s*\{\s*fork"
)


def check_code(code: str, inv: Invocation) -> Finding:
    """Judge inline interpreter code; shell-outs are judged as shell in a nested context."""
    if "fork" in code and _FORK_LOOP.search(code):
        return Finding("critical", f"{inv.prog} forks without end: a fork bomb", "system")
    if _SOCKET.search(code) and _SHELL_IO.search(code):
        why = f"{inv.prog} connects a shell to a network socket: a reverse shell"
        return Finding("critical", why, "exfiltration")
    best = LOW
    for m in _SHELL_OUT.finditer(code):
        raw = m.group("args")
        items = re.findall(_STRING, raw) if raw.startswith("[") else [raw]
        command = " ".join(_unquote(item) for item in items)
        best = higher(best, inv.ctx.nested(command, f"{inv.prog} runs a shell command"))
    for m in _BACKTICKS.finditer(code):
        best = higher(best, inv.ctx.nested(m.group(1), f"{inv.prog} runs a shell command"))
    for m in _DELETE.finditer(code):
        fn = m.group("fn")
        path = m.group("path")
        if fn.startswith("Path"):
            inner = re.search(_STRING, fn)
            path = inner.group() if inner else None
        if path is None:  # rmtree(os.path.expanduser('~')), remove(os.path.join('/etc', f))
            inner = _NESTED_ARG.match(code, m.end())
            path = inner.group(1) if inner else None
        if path is None:
            continue
        recursive = fn.endswith(_RECURSIVE_FNS) or "recursive" in code[m.end() : m.end() + 60]
        best = higher(
            best,
            judge_delete(
                _unquote(path),
                recursive=recursive,
                force=True,
                ctx=inv.ctx,
                verb=f"{inv.prog} {fn}",
            ),
        )
    if not best.blocks:
        best = higher(best, higher(_writes(code, inv), _sends(code, inv.prog)))
    return higher(best, api_calls(code, inv.prog))


# Billing objects whose cancel/void/refund stops a live subscription or payment.
_BILLING_CALL = re.compile(
    r"(?i:subscriptions?|invoices?|charges?|payment_?intents?)"
    r"\.(?P<name>cancel|void|refund)\w*\s*\("
)


def api_calls(code: str, who: str) -> Finding:
    """Method calls named like deletions: `client.deleteIndex(...)`, `Project.destroy_all`, and
    cancellations of billing objects: `gateway.subscription.cancel(...)`."""
    m = _API_CALL.search(code) or _BILLING_CALL.search(code)
    if m is None:
        return LOW
    return Finding("high", f"{who} calls the destructive API .{m.group('name')}")


def interpreter(inv: Invocation, stdin_text: str | None) -> Finding:
    """`python -c CODE`, `node -e CODE`, here-documents and piped code."""
    base = inv.prog.rstrip("0123456789.")
    flags = CODE_FLAGS.get(base, ())
    codes: list[str] = []
    args = inv.args
    for i, arg in enumerate(args):
        if arg in flags and i + 1 < len(args):
            codes.append(args[i + 1])
            break
        if len(arg) > 2 and arg[:2] in flags and not arg.startswith("--"):
            codes.append(arg[2:])
            break
    if base == "runner":
        codes.extend(positionals(args)[:1])
    codes.extend(r.target for r in inv.cmd.redirects if r.op in ("<<", "<<-", "<<<"))
    if stdin_text:
        codes.append(stdin_text)
    best = _line_loop_files(inv, base)
    for code in codes:
        best = higher(best, check_code(code, inv))
        if not best.blocks and ("/" in code or "~" in code):
            best = higher(best, _secret_literals(code, inv.prog))
    return best


def _line_loop_files(inv: Invocation, base: str) -> Finding:
    """`perl -ne print FILE`, `ruby -pe '' FILE`: the files after the code are read and printed."""
    if base not in ("perl", "ruby"):
        return LOW
    looping = any(a[:1] == "-" and a[1:2] != "-" and set(a[1:]) & set("np") for a in inv.args)
    files = positionals(inv.args)[1:] if looping else []
    best = LOW
    for path in files:
        best = higher(best, judge_read(path, inv.prog))
    return best


_PATH_LITERAL = re.compile(r"""["']((?:~|/|\.{1,2}/)[^"'\s]*)["']""")


def _secret_literals(code: str, prog: str) -> Finding:
    """Code that names a secret file in a string literal (`open('/etc/shadow')`) reads it."""
    for m in _PATH_LITERAL.finditer(code):
        found = judge_read(m.group(1), f"{prog} code")
        if found.blocks:
            return found
    return LOW


_AWK_SYSTEM = re.compile(r"\bsystem\s*\(\s*\"((?:[^\"\\]|\\.)*)\"")


# `"CMD" | getline` runs CMD; `print "CMD" | "sh"` pipes CMD into a shell.
_AWK_GETLINE = re.compile(r"\"((?:[^\"\\]|\\.)*)\"\s*\|\s*getline")
_AWK_TO_SHELL = re.compile(r"print\s+\"((?:[^\"\\]|\\.)*)\"\s*\|\s*\"(?:/bin/)?(?:ba|da|z)?sh\"")


def awk(inv: Invocation) -> Finding:
    """awk programs that run commands: system("..."), "..." | getline, print "..." | "sh",
    and a shell over gawk's /inet/tcp network files."""
    best = LOW
    for arg in positionals(inv.args, frozenset({"-F", "-v", "-f"}))[:1]:
        if "/inet/tcp/" in arg and "|&" in arg:
            why = f"{inv.prog} reads commands from a network connection and runs them"
            return Finding("critical", why, "exfiltration")
        for pattern in (_AWK_SYSTEM, _AWK_GETLINE, _AWK_TO_SHELL):
            for m in pattern.finditer(arg):
                best = higher(best, inv.ctx.nested(m.group(1), "awk runs a command"))
    return best
