"""An agent in the registry, and the rules its fields follow (checked before anything is stored).

A bad field is a `RequestError` naming it, the same whether it came through REST, MCP or Python.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from nerve.errors import RequestError

__all__ = ["MAX_CAPABILITIES", "Agent", "check_capabilities", "check_name", "check_task"]

# A name travels in URL paths (DELETE /api/agents/{name}) and in MCP tool arguments: no
# slashes, spaces or percent signs that would need escaping.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}")
MAX_CAPABILITIES = 100
MAX_CAPABILITY_CHARS = 100


@dataclass(frozen=True, slots=True)
class Agent:
    agent_name: str
    endpoint: str
    capabilities: tuple[str, ...]
    created_at: float
    updated_at: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent_name": self.agent_name,
            "endpoint": self.endpoint,
            "capabilities": list(self.capabilities),
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }


def check_name(name: object, param: str = "agent_name") -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise RequestError(
            f"'{param}' must be 1-100 characters of letters, digits, '_', '.', ':' or '-', "
            "starting with a letter or digit",
            param=param,
        )
    return name


def check_task(task: object) -> str:
    if not isinstance(task, str) or not task.strip() or len(task) > MAX_CAPABILITY_CHARS:
        raise RequestError(
            f"'task' must be a non-empty string of at most {MAX_CAPABILITY_CHARS} characters",
            param="task",
        )
    return task


def check_capabilities(capabilities: object) -> tuple[str, ...]:
    """The capabilities in their order, duplicates dropped."""
    if isinstance(capabilities, str) or not isinstance(capabilities, Iterable):
        raise RequestError("'capabilities' must be a list of strings", param="capabilities")
    found: list[str] = []
    for capability in capabilities:
        if (
            not isinstance(capability, str)
            or not capability.strip()
            or capability != capability.strip()
            or len(capability) > MAX_CAPABILITY_CHARS
        ):
            raise RequestError(
                "'capabilities' must hold non-empty strings without surrounding spaces, at most "
                f"{MAX_CAPABILITY_CHARS} characters each (got {capability!r:.60})",
                param="capabilities",
            )
        if capability not in found:
            found.append(capability)
    if len(found) > MAX_CAPABILITIES:
        raise RequestError(
            f"'capabilities' holds {len(found)} entries; the limit is {MAX_CAPABILITIES}",
            param="capabilities",
        )
    return tuple(found)
