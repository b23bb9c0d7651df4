"""What a tool receives and returns: `ToolContext` (with the injected `Services`) and `ToolResult`.

A tool never sees the agent: everything it may use arrives in `ctx.services`, filled once by the
server (memory, safety, config, an HTTP session, the scheduler, MCP clients, the file sandbox,
the environment for API keys). A failure the model should read raises `ToolError` or returns
`ToolResult.failure(...)`; the registry turns both, and any other exception, into data.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nerve.config import Config
from nerve.safety import SafetyEngine
from nerve.tools.files import FileSandbox

if TYPE_CHECKING:
    import aiohttp

    from nerve.memory import Memory

__all__ = ["Services", "ToolContext", "ToolError", "ToolResult"]


class ToolError(Exception):
    """Raised by a tool for a failure the model should read (the message goes back as data)."""


@dataclass(frozen=True, slots=True)
class ToolResult:
    ok: bool
    content: Any = None  # JSON-able; for a blocked call, the safety verdict as a dict
    error: str | None = None
    blocked: bool = False
    files: tuple[str, ...] = ()  # files the channel should send with the reply (send_file)
    attempts: int = 1  # runs it took (a tool with `retries` may run more than once)

    @classmethod
    def success(cls, content: Any = None, *, files: tuple[str, ...] = ()) -> ToolResult:
        return cls(True, content, None, False, files)

    @classmethod
    def failure(cls, error: str, *, content: Any = None, blocked: bool = False) -> ToolResult:
        return cls(False, content, error, blocked)

    def for_model(self) -> str:
        """The JSON text the model reads as the tool's answer."""
        if self.ok:
            body: Any = self.content
        else:
            body = {"error": self.error}
            if self.blocked:
                body["blocked"] = True
            if self.content is not None:
                body["details"] = self.content
        return json.dumps(body, ensure_ascii=False, default=str)


@dataclass
class Services:
    """The dependencies tools take what they need from; the server fills it once."""

    memory: Memory | None = None
    safety: SafetyEngine = field(default_factory=SafetyEngine)
    config: Config = field(default_factory=Config)
    http: aiohttp.ClientSession | None = None
    scheduler: Any = None  # nerve.assistant.jobs Scheduler (reminder tool)
    mcp: Any = None  # nerve.mcp.client McpClients (mcp_server tool)
    files: FileSandbox = None  # type: ignore[assignment]  # None: built from config below
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)

    def __post_init__(self) -> None:
        if self.files is None:
            self.files = FileSandbox(self.config.assistant.files.allowed_paths)


@dataclass
class ToolContext:
    """Who is asking and where: one per turn; `state` is per-conversation scratch space."""

    user_id: str
    channel: str = "terminal"
    chat_id: str = ""
    conversation: str = ""
    services: Services = field(default_factory=Services)
    state: dict[str, Any] = field(default_factory=dict)
