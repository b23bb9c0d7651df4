"""Shells and interpreters reading code: `bash -c CODE`, `sh SCRIPT`, `... | sh`, `at now`.

`bash -c` and `eval` run their text (and what `$(echo ...)` substitutions in it print);
a shell or interpreter reading code from a pipe is judged by where the code comes from: a
download or a decoder is `high`, an `echo` is judged as the text it prints, code a printing
program spells (`python -c 'print("rm -rf /")' | sh`) is judged, anything else is `medium`.
`at`/`batch` run what they read later, as a shell would now.
"""

from __future__ import annotations

from nerve.safety.invocation import Invocation
from nerve.safety.lexer import SUB, Command, Script
from nerve.safety.pipelines import printed_code
from nerve.safety.verdict import LOW, Finding, higher, wordset
from nerve.safety.wrappers import echoed, prog_of

__all__ = ["SHELLS", "echoed_by_subs", "runs_download", "scheduled", "shell", "stdin_runner"]

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh"})
_DOWNLOADERS = wordset("curl wget fetch aria2c http https xh nc ncat netcat socat telnet ssh")
_DECODERS = wordset("base64 base32 xxd openssl uudecode rev gunzip zcat gzip bzip2 xz unxz zstd")


def runs_download(scripts: list[Script]) -> bool:
    for script in scripts:
        for pipeline in script:
            for cmd in pipeline.commands:
                if prog_of(cmd)[0] in _DOWNLOADERS or runs_download(cmd.subs):
                    return True
    return False


def stdin_runner(inv: Invocation, kind: str) -> Finding | None:
    """A shell or interpreter reading code from a pipe: judge where the code comes from."""
    src, _ = prog_of(inv.upstream)
    if not src:
        return None
    if src in _DOWNLOADERS or runs_download(inv.upstream.subs if inv.upstream else []):
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


def echoed_by_subs(cmd: Command) -> list[str]:
    """What `$(echo ...)` substitutions in this command print: code, for eval and sh -c."""
    texts = []
    for script in cmd.subs:
        for pipeline in script:
            text = echoed(pipeline.commands[-1]) if pipeline.commands else None
            if text:
                texts.append(text)
    return texts


def fed_script(inv: Invocation, best: Finding, fed: str, piped_label: str) -> Finding:
    """Judge the text a program reads as a script: here-documents, then what is echoed into it."""
    for red in inv.cmd.redirects:
        if red.op in ("<<", "<<-", "<<<"):
            best = higher(best, inv.ctx.nested(red.target, fed))
    piped = echoed(inv.upstream)
    if piped is not None and not best.blocks:
        best = higher(best, inv.ctx.nested(piped, piped_label))
    return best


def shell(inv: Invocation) -> Finding:
    args, i, code_mode = inv.args, 0, False
    while i < len(args) and args[i][:1] in ("-", "+") and args[i] != "-":
        if args[i] in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            i += 1
        elif not args[i].startswith("--") and "c" in args[i][1:]:
            code_mode = True
        if args[i][:1] == "-" and args[i][1:2] != "-" and "n" in args[i][1:]:
            return LOW  # -n: read and check the syntax, run nothing
        i += 1
    rest = args[i:]
    fed_sub = any(r.op == "<" and SUB in r.target for r in inv.cmd.redirects)
    if not rest and fed_sub and runs_download(inv.cmd.subs):  # `sh < <(curl URL)`
        return Finding("high", f"{inv.prog} reads code downloaded from the network", "code")
    if code_mode:
        if rest and SUB in rest[0] and runs_download(inv.cmd.subs):
            why = f"{inv.prog} -c runs code downloaded from the network"
            return Finding("high", why, "code")
        best = inv.ctx.nested(rest[0] if rest else "", f"inside `{inv.prog} -c`")
        for text in echoed_by_subs(inv.cmd) if not best.blocks else ():
            best = higher(best, inv.ctx.nested(text, f"inside `{inv.prog} -c`"))
        return best
    if rest and rest[0] != "-":
        if SUB in rest[0] and runs_download(inv.cmd.subs):
            why = f"{inv.prog} runs a script downloaded from the network"
            return Finding("high", why, "code")
        return LOW  # a script file we cannot see
    best = fed_script(inv, LOW, f"script fed to {inv.prog}", f"text piped into {inv.prog}")
    return higher(best, stdin_runner(inv, "a script"))


def scheduled(inv: Invocation) -> Finding:
    """`at now`, `batch`: run the commands they read later, as a shell would now."""
    best = LOW
    if "-f" in inv.args:
        best = Finding("medium", f"{inv.prog} schedules a script to run later", "persistence")
    best = fed_script(inv, best, f"scheduled by {inv.prog}", f"scheduled by {inv.prog}")
    piped = echoed(inv.upstream)
    if not best.blocks and inv.upstream is not None and piped is None:
        best = higher(best, stdin_runner(inv, "commands"))
    return best
