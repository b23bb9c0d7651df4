"""nerve as an MCP server (SPEC PR-3): the tools, on the official SDK's `MCPServer`.

`build_mcp_server(app)` registers every tool as a thin adapter over the NerveApp's objects (the
pipeline, memory, gateway, agents, voice): the same calls the REST routes make. Schemas are
derived from the typed signatures and result models (tools_*.py), so results carry structured
content. Errors are translated once, here, in `NerveMCP.call_tool`:

    bad arguments (schema, unknown names)  → is_error "<tool>: invalid arguments: 'field': why"
    NerveError (RequestError, NotFound...) → is_error "<tool>: <its message>"
    anything else                          → is_error "<tool>: internal error", traceback logged

so a tool call never takes the server down. To add a tool, write it in the tools module of its
subsystem (or a new one registered in `build_mcp_server`): a typed async function and a result
model; the server needs nothing else.

Whose data: over HTTP (/mcp) a call is made with the request's key. A tool that reads or writes
a user's data takes a `Context` (the SDK injects it; it is not in the schema) and asks
`caller(ctx).check_user(user_id)`, as the REST routes ask the request's principal; a refusal
is an `is_error` result naming the user. Over stdio (`nerve mcp`) there is no key: LOCAL.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.mcpserver.utilities.context_injection import find_context_parameter
from mcp_types import CallToolResult, InputRequiredResult
from pydantic import ValidationError

from nerve import __version__
from nerve.errors import NerveError
from nerve.mcp import tools_agents, tools_gateway, tools_memory, tools_pipeline, tools_voice
from nerve.mcp.host import Host
from nerve.telemetry import describe, traced

__all__ = ["NerveMCP", "build_mcp_server", "invalid_arguments"]

log = logging.getLogger("nerve.mcp")

INSTRUCTIONS = (
    "nerve: safety checks for shell/SQL/text/actions, a process pipeline (language → intent → "
    "safety → execute), long-term memory for agents (memories, events, facts, context), model "
    "routing and reasoning through nerve's gateway, agent routing and voice. Run `check_safety` "
    "(or `safe_execute`) before anything destructive; call `memory_context` at the start of a "
    "session and `record_event` while you work."
)


class NerveMCP(MCPServer[Any]):
    """MCPServer whose tool failures are all `is_error` results with a readable message."""

    def __init__(self) -> None:
        super().__init__(
            "nerve", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
        )
        self._arguments: dict[str, frozenset[str]] = {}

    def add_tool(
        self, fn: Callable[..., Any], name: str | None = None, *args: Any, **options: Any
    ) -> None:
        super().add_tool(fn, name, *args, **options)
        injected = find_context_parameter(fn)  # the SDK's Context: not a client's argument
        self._arguments[name or fn.__name__] = frozenset(
            p for p in inspect.signature(fn).parameters if p != injected
        )

    @traced("execute_tool {name}", describe.tool_served)  # a span per call (SPEC OB-1)
    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        expected = self._arguments.get(name)
        unknown = sorted(set(arguments) - expected) if expected is not None else []
        if expected is not None and unknown:
            raise ToolError(
                f"{name}: unknown argument {', '.join(map(repr, unknown))}; "
                f"it takes {', '.join(sorted(expected))}"
            )
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError as e:
            cause = e.__cause__
            if isinstance(cause, NerveError):
                raise ToolError(f"{name}: {cause.message}") from None
            log.error("MCP tool %s failed", name, exc_info=cause or e)
            raise ToolError(f"{name}: internal error; see the server log") from None
        except ToolError as e:
            if isinstance(e.__cause__, ValidationError):
                raise ToolError(f"{name}: {invalid_arguments(e.__cause__)}") from None
            raise


def invalid_arguments(error: ValidationError) -> str:
    """'invalid arguments: 'limit': Input should be ...; ...', without the rejected values."""
    parts = []
    for item in error.errors(include_url=False, include_input=False):
        where = ".".join(str(p) for p in item["loc"])
        parts.append(f"'{where}': {item['msg']}" if where else str(item["msg"]))
    return "invalid arguments: " + "; ".join(parts)


def build_mcp_server(app: Host) -> NerveMCP:
    """A new MCPServer over `app` (one per NerveApp: the SDK's HTTP sessions run once each)."""
    server = NerveMCP()
    for module in (tools_pipeline, tools_memory, tools_agents, tools_gateway, tools_voice):
        module.register(server, app)
    return server
