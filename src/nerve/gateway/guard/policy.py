"""Which tool a call is for, and what of its arguments the safety engine should judge.

The user's `guard.tools` globs are tried first (in the order written, first match wins, case
as written), then the built-in table of the tools agents really send; any other tool is judged
as an `action` on its name, as nerve judges MCP tools (`delete_all_data` is destructive by its
name). A `path` tool has no engine kind of its own: see `patch.path_script`.

Arguments are read leniently, because a guard that gives up on a malformed call is the hole
a model would fall through: JSON arguments cut short are closed and parsed, an argument that
still cannot be parsed is dug out by name, and a shell or SQL tool's raw text is judged as is.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

import orjson

from nerve.config_sections import ToolRule
from nerve.gateway.guard.patch import path_script
from nerve.safety.verdict import Kind

__all__ = ["DEFAULT_TOOLS", "Subject", "ToolTable", "command_text", "lenient_loads", "subject"]


def _rule(kind: str, argument: str | None = None) -> ToolRule:
    return ToolRule.model_validate({"kind": kind, "argument": argument})


DEFAULT_TOOLS: dict[str, ToolRule] = {
    # Claude Code
    "Bash": _rule("shell", "command"),
    "Write": _rule("path", "file_path"),
    "Edit": _rule("path", "file_path"),
    "MultiEdit": _rule("path", "file_path"),
    "NotebookEdit": _rule("path", "notebook_path"),
    "KillShell": _rule("off"),  # stops a shell the agent itself started, nothing else
    "KillBash": _rule("off"),
    # Codex: `shell`'s command is an argv array; apply_patch's patch is `input` (or, as a
    # custom tool, the call's whole raw input); write_stdin types into a running exec session
    "shell": _rule("shell", "command"),
    "local_shell": _rule("shell", "command"),
    "container.exec": _rule("shell", "command"),
    "exec_command": _rule("shell", "cmd"),
    "write_stdin": _rule("shell", "chars"),
    "apply_patch": _rule("path", "input"),
    # OpenHands: str_replace_editor's `command` is the editor's verb (create, view), not a shell
    "execute_bash": _rule("shell", "command"),
    "str_replace_editor": _rule("path", "path"),
    # Gemini CLI, Cline / Roo, Cursor
    "run_shell_command": _rule("shell", "command"),
    "write_file": _rule("path", "file_path"),
    "replace": _rule("path", "file_path"),
    "execute_command": _rule("shell", "command"),
    "write_to_file": _rule("path", "path"),
    "run_terminal_cmd": _rule("shell", "command"),
    "edit_file": _rule("path", "target_file"),
    "delete_file": _rule("path", "target_file"),
    # generic names
    "run_command": _rule("shell"),
    "bash": _rule("shell"),
    "shell_exec": _rule("shell"),
    "execute_sql": _rule("sql"),
    "run_sql": _rule("sql"),
    "query": _rule("sql"),
}
_ACTION = _rule("action")
# The argument names a kind's value usually goes by, when the rule names none.
_USUAL: dict[str, tuple[str, ...]] = {
    "shell": ("command", "cmd", "script"),
    "sql": ("sql", "query", "statement"),
    "path": ("file_path", "path", "target_file", "notebook_path", "filename", "input", "patch"),
    "action": ("action",),
}
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "fish"})
_C_FLAG = re.compile(r"^-[a-z]*c[a-z]*$")  # -c, -lc, -lic: the next word is the script
_DELETES = re.compile(r"delete|remove|unlink|erase|(?:^|[^a-z])rm(?:[^a-z]|$)")
_CLOSERS = ("", '"}', "}", '"]}', "]}", '"}}', "}}")
_CACHE_MAX = 4096


@dataclass(frozen=True, slots=True)
class Subject:
    """What the engine judges for one call: `kind` is the engine's, `content` its input."""

    kind: Kind
    content: str


class ToolTable:
    """The rule for a tool name: the user's globs, then DEFAULT_TOOLS, then an action."""

    def __init__(self, user: Mapping[str, ToolRule]) -> None:
        self._user = list(user.items())
        self._cache: dict[str, ToolRule] = {}

    def rule(self, name: str) -> ToolRule:
        found = self._cache.get(name)
        if found is None:
            found = next((r for glob, r in self._user if fnmatchcase(name, glob)), None)
            found = found or DEFAULT_TOOLS.get(name, _ACTION)
            if len(self._cache) < _CACHE_MAX:  # names come from models: keep the cache bounded
                self._cache[name] = found
        return found


def subject(name: str, rule: ToolRule, arguments: object, *, freeform: bool) -> Subject | None:
    """What to judge for a call to `name` with `arguments` (a JSON string, an object, or with
    `freeform` a custom tool's raw input); None: nothing to judge (the rule is off, or the
    argument is missing, so the tool has nothing to run)."""
    if rule.kind == "off":
        return None
    if rule.kind == "action" and rule.argument is None:
        return Subject("action", name)
    # The rule's argument first, then the kind's usual names: a call that puts its command
    # under another name than the table expects is judged rather than waved through.
    names = tuple(dict.fromkeys(filter(None, (rule.argument, *_USUAL[rule.kind]))))
    value = arguments if freeform and isinstance(arguments, str) else _value(arguments, names)
    if value is None:
        return Subject("action", name) if rule.kind == "action" else None
    if rule.kind == "shell":
        text = command_text(_with_args(value, arguments))
        return Subject("shell", text) if text is not None else None
    if rule.kind == "sql":
        return Subject("sql", value if isinstance(value, str) else _dump(value))
    if rule.kind == "path":
        script = path_script(value, delete=bool(_DELETES.search(name.lower())))
        return Subject("shell", script) if script is not None else None
    return Subject("action", value if isinstance(value, str) else _dump(value))


def _value(arguments: object, names: tuple[str, ...]) -> object:
    if isinstance(arguments, str):
        parsed = lenient_loads(arguments)
        if isinstance(parsed, str):  # arguments encoded twice, as some models do
            parsed = lenient_loads(parsed)
        if not isinstance(parsed, dict):
            salvaged = _salvage(arguments, names)
            if salvaged is not None:
                return salvaged
            # Not JSON at all: a shell or SQL tool's text is what it runs, a path tool's the
            # path or patch it touches.
            return arguments if arguments.strip() else None
        arguments = parsed
    if not isinstance(arguments, dict):
        return None
    return next((arguments[n] for n in names if arguments.get(n) is not None), None)


def _with_args(value: object, arguments: object) -> object:
    """`{"command": "rm", "args": ["-rf", "/"]}` (MCP shell servers' shape) as one argv."""
    if not isinstance(value, str):
        return value
    if isinstance(arguments, str):
        if '"args"' not in arguments:  # the usual case: no second parse
            return value
        arguments = lenient_loads(arguments)
    rest = arguments.get("args") if isinstance(arguments, dict) else None
    if isinstance(rest, list) and rest:
        return [value, *(r if isinstance(r, str) else _dump(r) for r in rest)]
    return value


def lenient_loads(text: str) -> Any:
    """`text` as JSON, closing a string, array or object the text was cut off in; None when
    it is not JSON even so."""
    for closer in _CLOSERS:
        try:
            return orjson.loads(text + closer)
        except orjson.JSONDecodeError:
            continue
    return None


def _salvage(text: str, names: tuple[str, ...]) -> str | None:
    """The string value of the first of `names` in text that is not JSON (single quotes,
    a stray brace): `"command": "rm -rf ~"` found by its shape."""
    for name in names:
        pattern = rf"""["']?{re.escape(name)}["']?\s*[:=]\s*(?:"((?:[^"\\]|\\.)*)"?|'([^']*)'?)"""
        m = re.search(pattern, text)
        if m is None:
            continue
        if m.group(1) is not None:
            try:
                decoded = json.loads(f'"{m.group(1)}"')
                return decoded if isinstance(decoded, str) else m.group(1)
            except ValueError:
                return m.group(1)
        return m.group(2)
    return None


def command_text(value: object) -> str | None:
    """A shell command as text: a string as it is; an argv array (Codex's
    ["bash", "-lc", "rm -rf /"]) unwrapped to its script, or quoted back into one command."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        if not value:
            return None
        argv = [v if isinstance(v, str) else _dump(v) for v in value]
        shell = argv[0].rsplit("/", 1)[-1]
        if len(argv) == 3 and shell in _SHELLS and _C_FLAG.match(argv[1]):
            return argv[2]
        return shlex.join(argv)
    return _dump(value) if value is not None else None


def _dump(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
