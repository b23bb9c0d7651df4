"""git: the operations that lose work, judged by git's own grammar.

Uncommitted changes: `reset --hard`, `checkout` over paths (`checkout -- .`, `checkout HEAD
file`, `--pathspec-from-file`), `checkout -f`, `switch -f`/`--discard-changes`, `restore`,
`clean -f`, `stash drop/clear`, `worktree remove -f`. History: `push --force`, `branch -D`,
`filter-branch`. Switching branches (`checkout main`, `checkout -`, `checkout -b feature`,
`checkout -qbfeature`, `switch -cfix`) loses nothing and passes. Commands git runs for you
(`rebase --exec CMD`, `submodule foreach CMD`, `bisect run CMD`) and settings given for one run
(`git -c core.hooksPath=/tmp/h commit`, `git -c alias.x='!CMD' x`) are judged as what they run.
"""

from __future__ import annotations

import re
from shlex import join

from nerve.safety.invocation import Invocation, flags_of, positionals, with_next
from nerve.safety.verdict import LOW, Finding, higher

__all__ = ["git"]

_GIT_VALUE_OPTS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env"})
_PROTECTED = frozenset({"main", "master", "trunk", "production", "prod", "release"})
# checkout options that take a value, as separate words or glued (-bname).
_CHECKOUT_VALUES = frozenset(
    {
        "-b",
        "-B",
        "--orphan",
        "--conflict",
        "-t",
        "--track",
        "-U",
        "--unified",
        "--inter-hunk-context",
    }
)
_WHOLE_TREE = frozenset({".", "*", ":/", "./", ":(top)"})
# A single checkout argument that names a file, not a branch: a source-file extension, a glob,
# a trailing slash or ./ (branch names rarely look like `app.py` or `src/`).
_FILE_LIKE = re.compile(
    r"^\./|/$|[*?]|\.(?:txt|md|rst|py|pyi|js|jsx|ts|tsx|json|ya?ml|toml|ini|cfg|conf|lock|c|h|"
    r"cc|cpp|hpp|go|rs|java|kt|rb|php|cs|swift|sh|css|scss|html|xml|sql|csv|env|properties|"
    r"gradle|mod|sum)$"
)


def _lost(why: str) -> Finding:
    return Finding("high", why, "destructive")


def _bundles(arg: str, letters: str, values: str = "") -> bool:
    """Whether a short-option bundle (`-qf`) holds one of `letters` before any letter of
    `values`, whose option takes the rest of the word as its value (`-qbfix`: b's value)."""
    if not arg.startswith("-") or arg.startswith("--"):
        return False
    for letter in arg[1:]:
        if letter in letters:
            return True
        if letter in values:
            return False
    return False


def _checkout(rest: list[str]) -> Finding:
    """Path checkouts overwrite uncommitted changes; branch switches do not."""
    pos: list[str] = []
    forced = False
    branching = any(a.startswith(("-b", "-B", "--orphan")) or _bundles(a, "bB") for a in rest)
    i = 0
    while i < len(rest):
        arg = rest[i]
        if arg == "--":
            if rest[i + 1 :]:
                return _lost("git checkout -- PATHS discards uncommitted changes to them")
            break
        if arg.startswith("--pathspec-from-file"):
            return _lost("git checkout --pathspec-from-file discards uncommitted changes")
        if arg in ("-f", "--force") or _bundles(arg, "f", values="bBU"):
            forced = True
        if arg in _CHECKOUT_VALUES or arg.split("=", 1)[0] in ("--orphan", "--conflict"):
            i += 2 if "=" not in arg else 1
            continue
        if not arg.startswith("-") or arg == "-":
            pos.append(arg)
        i += 1
    if branching and not forced:
        return LOW  # `checkout -b NAME [START]` creates a branch; git refuses paths with it
    if set(pos) & _WHOLE_TREE:
        return _lost("git checkout . discards every uncommitted change")
    if len(pos) >= 2:
        return _lost(f"git checkout {pos[0]} {pos[1]} overwrites the file's uncommitted changes")
    if pos and _FILE_LIKE.search(pos[0]):
        return _lost(f"git checkout {pos[0]} discards the file's uncommitted changes")
    if forced:
        return _lost("git checkout -f discards uncommitted changes")
    return LOW


def _settings(inv: Invocation, args: list[str]) -> Finding:
    """`git -c core.hooksPath=/tmp/h commit`, `git -c alias.x='!CMD' x`: config for one run."""
    best = LOW
    for arg, value in with_next(args):
        setting = value if arg == "-c" else arg[2:] if arg.startswith("-c") else ""
        key, eq, val = setting.partition("=")
        if eq:
            best = higher(best, _alias(inv, [key, val]) or _config([key, val]))
    return best


def _alias(inv: Invocation, pos: list[str]) -> Finding | None:
    """`alias.x = !CMD`: the alias runs CMD in a shell, judged as that command."""
    if len(pos) < 2 or not pos[0].lower().startswith("alias.") or not pos[1].startswith("!"):
        return None
    found = inv.ctx.nested(pos[1][1:], f"git {pos[0]}")
    return found if found.blocks else None


def _runs(inv: Invocation, sub: str, rest: list[str]) -> Finding | None:
    """Commands git runs for you: `rebase --exec CMD`, `submodule foreach CMD`, `bisect run`."""
    command = ""
    if sub == "rebase":
        for arg, value in with_next(rest):
            if arg in ("-x", "--exec"):
                command = value
            elif arg.startswith("--exec="):
                command = arg.split("=", 1)[1]
    elif sub == "submodule" and "foreach" in rest:
        command = " ".join(a for a in rest[rest.index("foreach") + 1 :] if a != "--recursive")
    elif sub == "bisect" and rest[:1] == ["run"]:
        command = join(rest[1:])
    return inv.ctx.nested(command, f"git {sub} runs") if command else None


def git(inv: Invocation) -> Finding:
    args = inv.args
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in _GIT_VALUE_OPTS else 1
    settings = _settings(inv, args[:i]) if any(a.startswith("-c") for a in args[:i]) else LOW
    if i >= len(args) or settings.blocks:
        return settings
    sub, rest = args[i].lower(), args[i + 1 :]
    ran = _runs(inv, sub, rest) if sub in ("rebase", "submodule", "bisect") else None
    if ran is not None and ran.blocks:
        return ran
    if sub == "checkout":
        return _checkout(rest)
    short, long = flags_of(rest)
    pos = positionals(rest)
    forced = "f" in short or "--force" in long
    if sub == "reset" and ({"--hard", "--merge"} & long):
        return _lost("git reset --hard discards uncommitted work")
    if sub == "clean" and forced and "n" not in short and "--dry-run" not in long:
        return _lost("git clean -f deletes untracked files")
    if sub == "push":
        return _push(short, long, pos)
    opts = rest[: rest.index("--")] if "--" in rest else rest
    switch_forced = "--force" in long or any(_bundles(a, "f", values="cC") for a in opts)
    if sub == "switch" and (switch_forced or "--discard-changes" in long):
        return _lost("git switch --discard-changes throws away uncommitted changes")
    if (
        sub == "rm"
        and forced
        and "--cached" not in long
        and (pos or "--pathspec-from-file" in long)
    ):
        return _lost("git rm -f deletes files with their uncommitted changes")
    if sub == "branch":
        if "D" in short or ("--delete" in long and forced):
            return _lost("git branch -D deletes a branch even if it is not merged")
        if forced and pos:
            return _lost("git branch --force moves a branch, dropping its commits")
    if sub == "stash" and pos and pos[0] in ("drop", "clear"):
        return _lost(f"git stash {pos[0]} deletes stashed work")
    if sub == "restore":
        staged_only = ("S" in short or "--staged" in long) and not (
            "W" in short or "--worktree" in long
        )
        if (pos or any(a.startswith("--pathspec-from-file") for a in rest)) and not staged_only:
            return _lost("git restore discards uncommitted changes")
    if sub in ("filter-branch", "filter-repo"):
        return _lost(f"git {sub} rewrites the whole history")
    if sub == "worktree" and pos[:1] == ["remove"] and forced:
        return _lost("git worktree remove --force deletes a worktree with uncommitted changes")
    if (sub == "reflog" and pos[:1] in (["expire"], ["delete"])) or (
        sub == "update-ref" and ("d" in short or "--stdin" in long)
    ):
        return _lost(f"git {sub} {pos[0] if pos else '-d'} drops the references that recover work")
    if sub == "config":
        return _alias(inv, pos) or _config(pos)
    if sub == "credential" and pos[:1] == ["fill"]:
        return Finding("high", "git credential fill prints a stored password", "credentials")
    if sub in ("reflog", "gc", "update-ref", "worktree") and (
        {"expire", "delete"} & set(pos) or "d" in short or "--prune" in {x[:7] for x in long}
    ):
        why = f"git {sub} drops references or unreachable commits"
        return Finding("medium", why, "destructive")
    return LOW


# Settings that make git run a program of the setter's choosing on ordinary commands.
_RUNS = frozenset({"core.hookspath", "core.fsmonitor", "core.sshcommand", "core.pager"})


def _config(pos: list[str]) -> Finding:
    """`git config core.hooksPath DIR` and friends plant code that every commit runs;
    `credential.helper store` keeps every password git is given in a plain file."""
    if len(pos) < 2:
        return LOW
    key, value = pos[0].lower(), pos[1]
    if key == "credential.helper" and value.split()[:1] == ["store"]:
        why = "git config credential.helper store keeps every password in a plain file"
        return Finding("high", why, "credentials")
    in_repo = value.startswith((".githooks", ".husky", "hooks")) or value in ("false", "true")
    if key in ("core.hookspath", "core.fsmonitor") and not in_repo:
        why = f"git config {pos[0]} makes git run programs from {value}"
        return Finding("high", why, "persistence")
    if ((key in _RUNS or key.startswith("alias.")) and value.startswith("!")) or (
        key in ("core.sshcommand", "core.pager") and any(c in value for c in ";|&$`")
    ):
        return Finding("medium", f"git config {pos[0]} runs a shell command", "persistence")
    return LOW


def _push(short: set[str], long: set[str], pos: list[str]) -> Finding:
    forced = "f" in short or any(
        flag.startswith("--force") and flag not in ("--force-with-lease", "--force-if-includes")
        for flag in long
    )
    if forced or any(p.startswith("+") for p in pos):
        return _lost("git push --force overwrites remote history")
    if (
        "--mirror" in long
        or "--delete" in long
        or "d" in short
        or any(p.startswith(":") for p in pos)
    ):
        return _lost("git push deletes remote branches")
    targets = {p.rsplit(":", 1)[-1].removeprefix("refs/heads/") for p in pos[1:] or pos}
    if targets & _PROTECTED:
        return Finding("medium", "git push goes straight to a protected branch", "destructive")
    return LOW
