"""A `path` tool judged by the engine: the shell operation that does to each path what it does.

The engine has no path kind; its shell rules already judge deletes and writes by their target
(`fsrules`: the class of the resolved path, not its spelling). So a tool that writes a file is
judged as the shell command that overwrites it (`: > PATH`, a redirection), and one that deletes
a file as `rm -f -- PATH`, each path quoted so its spelling cannot add to the command. A patch
(Codex's apply_patch) is judged on every path it touches: `*** Delete File` deletes, `*** Add File`
and `*** Update File` write, and `*** Move to` writes the new path and deletes the old one.
Writing into /etc or onto a disk blocks; writing ./src/app.py or ~/notes.txt does not, because
the engine's shell rules do not block those either — one implementation decides.
"""

from __future__ import annotations

import re
import shlex

__all__ = ["PATCH_START", "patch_operations", "path_script"]

PATCH_START = "*** Begin Patch"
_OPERATION = re.compile(
    r"^\*\*\* (Add|Delete|Update) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$", re.M
)


def patch_operations(patch: str) -> list[tuple[str, str]]:
    """`(delete | write, path)` for each file a patch touches, in order."""
    out: list[tuple[str, str]] = []
    updating: str | None = None
    for m in _OPERATION.finditer(patch):
        verb, path, moved_to = m.group(1), m.group(2), m.group(3)
        if moved_to is not None:
            if updating is not None:  # the file is renamed: the old path goes away
                out.append(("delete", updating))
            out.append(("write", moved_to))
            continue
        updating = path if verb == "Update" else None
        out.append(("delete" if verb == "Delete" else "write", path))
    return out


def path_script(value: object, *, delete: bool) -> str | None:
    """The shell script equivalent to what a path tool does with `value` (a path, a list of
    paths, or a patch); `delete`: the tool deletes the paths it names. None: no path."""
    if isinstance(value, str) and PATCH_START in value:
        operations = patch_operations(value)
    elif isinstance(value, str):
        operations = [("delete" if delete else "write", value)] if value.strip() else []
    elif isinstance(value, list):
        verb = "delete" if delete else "write"
        operations = [(verb, p) for p in value if isinstance(p, str) and p.strip()]
    else:
        return None
    if not operations:
        return None
    return "\n".join(_line(verb, path) for verb, path in operations)


def _line(verb: str, path: str) -> str:
    quoted = shlex.quote(path)
    return f"rm -f -- {quoted}" if verb == "delete" else f": > {quoted}"
