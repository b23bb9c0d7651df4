"""The tools Codex sends on /v1/responses, shaped as it sends them: a function and a custom
(freeform, grammar-bound) `apply_patch`, and a patch for the latter to carry."""

from __future__ import annotations

from typing import Any

JSON = dict[str, Any]
SHELL: JSON = {
    "type": "function",
    "name": "shell",
    "description": "Run a command.",
    "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}},
    "strict": False,
}
GRAMMAR = 'start: "*** Begin Patch" /(.|\\n)*/ "*** End Patch"'
APPLY_PATCH: JSON = {
    "type": "custom",
    "name": "apply_patch",
    "description": "Edit files.",
    "format": {"type": "grammar", "syntax": "lark", "definition": GRAMMAR},
}
PATCH = '*** Begin Patch\n*** Add File: hi.txt\n+héllo "x"\n*** End Patch'
