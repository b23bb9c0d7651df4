"""Workspace confinement for the assistant's shell: a second, stricter check after SF-1..SF-4.

The safety engine judges whether a command is dangerous; this judges whether it stays in the
workspace. Refused: a path (absolute, `~`, `$HOME`, or with `..`) resolving outside the allowed
roots, except read-only program and device locations; and a command whose program name is
computed (`$(echo rm) -rf /`, `` `x` ``, `$cmd`), which no rule can judge. The scan reads the raw
text, so paths inside `bash -c "..."`, here-strings and here-documents count too. It is a guard
against a model's mistakes, not a kernel sandbox: run nerve as an unprivileged user.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Sequence
from pathlib import Path

from nerve.safety import Verdict
from nerve.safety.lexer import SUB, Script, lex

__all__ = ["SYSTEM_READ_ONLY", "confine_command"]

# Where programs and harmless devices live: naming them is not leaving the workspace.
SYSTEM_READ_ONLY = (
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/opt",
    "/dev/null", "/dev/zero", "/dev/urandom", "/dev/random",
    "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/fd",
)  # fmt: skip
# A path-looking token not glued to a word, a dot, a colon or a slash (so not URLs, not s/a/b/).
_PATH = re.compile(r"(?<![\w.:/$-])(?:~[\w.-]*|\$\{?HOME\}?|\.\.(?=/|$|[\s;&|)'\"`])|/)"
                   r"[^\s'\"`;|&<>()]*")  # fmt: skip


def _programs(script: Script, words: list[str]) -> list[str]:
    """The program names of every command (substitutions too); all words are added to `words`."""
    names: list[str] = []
    for pipeline in script:
        for cmd in pipeline.commands:
            plain = [w for w in cmd.words if not re.match(r"^\w+=", w)]
            words += plain + [r.target for r in cmd.redirects if not r.op.startswith("<<")]
            if plain:
                names.append(plain[0])
            for sub in cmd.subs:
                names += _programs(sub, words)
    return names


def _inside(path: Path, roots: Sequence[Path]) -> bool:
    return any(path.is_relative_to(r) for r in roots)


def confine_command(command: str, roots: Sequence[Path], cwd: Path) -> Verdict | None:
    """None when the command stays in the workspace; otherwise a blocking verdict saying why."""
    words: list[str] = []
    for name in _programs(lex(command), words):
        if SUB in name or "$" in name or "`" in name:
            return Verdict(False, "high", "the program to run is computed at run time "
                           f"({name!r}), so it cannot be checked", "rule")  # fmt: skip
    home = os.path.expanduser("~")
    # Path-looking text anywhere, and every relative word (a symlink in the workspace may lead out)
    relative = [w for w in words if w and not w.startswith(("-", "/", "~", "$")) and SUB not in w]
    for raw in [m.group(0) for m in _PATH.finditer(command)] + relative:
        text = re.sub(r"^\$\{?HOME\}?", home, raw)
        if text.startswith("~"):
            text = os.path.expanduser(text)
        real = Path(os.path.normpath(cwd / text))
        with contextlib.suppress(OSError, RuntimeError, ValueError):  # judged as written
            real = real.resolve()  # a symlink inside the workspace may point out
        if _inside(real, roots) or any(
            str(real) == p or str(real).startswith(p + "/") for p in SYSTEM_READ_ONLY
        ):
            continue
        allowed = ", ".join(str(r) for r in roots)
        return Verdict(False, "high", f"path is not allowed: {raw} resolves outside the "
                       f"workspace (allowed: {allowed})", "rule", "workspace")  # fmt: skip
    return None
