"""An agent in the registry, and the rules its fields follow (checked before anything is stored).

A bad field is a `RequestError` naming it, the same whether it came through REST, MCP or Python.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from nerve.errors import RequestError
from nerve.memory.fields import TRIMMED_PATTERN, text_problem

__all__ = [
    "CAPABILITY_PATTERN",
    "ENDPOINT_PATTERN",
    "MAX_CAPABILITIES",
    "MAX_CAPABILITY_CHARS",
    "NAME_PATTERN",
    "Agent",
    "check_capabilities",
    "check_endpoint",
    "check_name",
    "check_task",
]

# A name travels in URL paths (DELETE /api/agents/{name}) and in MCP tool arguments: no
# slashes, spaces or percent signs that would need escaping.
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$"
# http(s), a host part, then anything but spaces and control characters. The guard (guard.py)
# decides which hosts may be called; this is only the shape. The REST schema carries these.
ENDPOINT_PATTERN = (
    r"^[Hh][Tt][Tt][Pp][Ss]?://[^\u0000-\u0020\u007f/?#]+(?:[/?#][^\u0000-\u0020\u007f]*)?$"
)
CAPABILITY_PATTERN = TRIMMED_PATTERN
_NAME, _ENDPOINT = re.compile(NAME_PATTERN), re.compile(ENDPOINT_PATTERN)
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


def check_endpoint(endpoint: object, max_chars: int) -> str:
    if not isinstance(endpoint, str) or not 0 < len(endpoint) <= max_chars:
        raise RequestError(f"'endpoint' must be a URL of 1-{max_chars} characters",
                           param="endpoint")  # fmt: skip
    if not _ENDPOINT.fullmatch(endpoint):
        raise RequestError(
            "'endpoint' must be an http:// or https:// URL with a host, without spaces or "
            f"control characters (got {endpoint!r:.80})",
            param="endpoint",
        )
    return endpoint


def check_task(task: object) -> str:
    if (
        not isinstance(task, str)
        or len(task) > MAX_CAPABILITY_CHARS
        or text_problem(task, blank=False)
    ):
        raise RequestError(
            f"'task' must be a non-empty string of at most {MAX_CAPABILITY_CHARS} characters, "
            "without control characters",
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
            or text_problem(capability)
        ):
            raise RequestError(
                "'capabilities' must hold non-empty strings without surrounding spaces or control "
                f"characters, at most {MAX_CAPABILITY_CHARS} characters each "
                f"(got {capability!r:.60})",
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
