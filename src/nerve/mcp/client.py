"""nerve's MCP client (SPEC AS-5): configured servers, their tools, calls that survive restarts.

    clients = McpClients(config.assistant.mcp_servers, cwd=...)
    await clients.start()            each enabled server connected by a supervisor of its own
    clients.tool_names()             {"github": ["github__create_issue", ...]}: hints, names only
    clients.tools(["github__create_issue"])   Tool.from_schema wrappers for the model's schemas
    await clients.call("github", "create_issue", {...}) -> ToolResult   (never raises)
    await clients.reload(servers)    hot reload: start new, stop removed, restart changed
    await clients.stop()

With `registry=` (the assistant's ToolRegistry) every MCP tool is also registered there under
its qualified name, kept in sync as servers connect, change, are disabled or removed: calls
then go through the registry's chokepoint (schema validation, timeout) like native tools.

Tool names the model sees are qualified `<server>__<tool>` (characters outside [A-Za-z0-9_-]
become `_`, at most 64 characters: what OpenAI and Anthropic accept); `resolve` maps them back.
Only the names go to the model until `mcp_server(action="use_tools")` asks for the schemas.

A server's `is_error` result is a failed ToolResult carrying the server's message. A server
that died is restarted by its supervisor (connection.py); a call in the outage fails at once
saying the server is reconnecting, and calls work again once it is back.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TextIO

import mcp_types
from mcp import MCPError

from nerve.config_sections import McpServerConfig
from nerve.mcp.connection import McpConnection, default_backoff, describe
from nerve.telemetry import describe as spans
from nerve.telemetry import traced
from nerve.tools import Tool, ToolRegistry
from nerve.tools.result import ToolResult

__all__ = ["McpClients", "qualified_name", "to_tool_result"]

SEPARATOR = "__"
_INVALID = re.compile(r"[^A-Za-z0-9_-]")


def qualified_name(server: str, tool: str) -> str:
    """`<server>__<tool>`, made safe for the providers' function names."""
    return _INVALID.sub("_", f"{server}{SEPARATOR}{tool}")[:64]


class McpClients:
    def __init__(
        self,
        servers: Iterable[McpServerConfig],
        *,
        cwd: str | Path | None = None,
        errlog: TextIO | None = None,
        backoff: Callable[[int], float] = default_backoff,
        connect_timeout: float = 30.0,
        call_timeout: float = 120.0,
        registry: ToolRegistry | None = None,
    ) -> None:
        self.registry = registry
        self._registered: set[str] = set()  # the MCP tools put into `registry`
        self.cwd = cwd
        self.errlog = errlog
        self.backoff = backoff
        self.connect_timeout = connect_timeout
        self.call_timeout = call_timeout
        self._configured = {c.name: c for c in servers}  # as the config file says
        self._servers: dict[str, McpConnection] = {}
        self._lock = asyncio.Lock()
        self._started = False

    # -- lifecycle ---------------------------------------------------------------------------

    async def start(self, wait: float = 10.0) -> None:
        """Start every configured server; wait up to `wait` s for their first attempts."""
        async with self._lock:
            self._started = True
            for config in self._configured.values():
                self._open(config)
        await self._settle(self._servers, wait)

    async def stop(self) -> None:
        async with self._lock:
            self._started = False
            servers, self._servers = self._servers, {}
            await asyncio.gather(*(c.stop() for c in servers.values()))
            self._sync()

    async def reload(self, servers: Iterable[McpServerConfig], wait: float = 10.0) -> None:
        """Hot reload: start servers new to the list, stop removed ones, restart changed ones.
        Servers added at runtime (`add`) stay unless the list names them; an unchanged server
        keeps running (and keeps a runtime enable/disable)."""
        new = {c.name: c for c in servers}
        async with self._lock:
            old, self._configured = self._configured, new
            removed = [n for n in old if n not in new]
            changed = [n for n, c in new.items() if old.get(n) != c]
            await asyncio.gather(*(self._close(n) for n in removed + changed))
            for name in changed:
                self._open(new[name])
        await self._settle({n: self._servers[n] for n in changed if n in self._servers}, wait)

    async def add(self, config: McpServerConfig, wait: float = 10.0) -> None:
        """Register (or replace) a server at runtime; wait up to `wait` s for it to connect."""
        async with self._lock:
            await self._close(config.name)
            self._open(config)
        await self._settle({config.name: self._servers[config.name]}, wait)

    async def set_enabled(self, name: str, enabled: bool, wait: float = 10.0) -> None:
        connection = self._servers.get(name)
        if connection is None:
            raise KeyError(name)
        if connection.config.enabled == enabled:
            return
        await self.add(connection.config.model_copy(update={"enabled": enabled}), wait)

    def _open(self, config: McpServerConfig) -> None:
        connection = McpConnection(
            config, cwd=self.cwd, errlog=self.errlog, backoff=self.backoff,
            connect_timeout=self.connect_timeout, on_change=self._sync,
        )  # fmt: skip
        self._servers[config.name] = connection
        if self._started and config.enabled:
            connection.start()

    async def _close(self, name: str) -> None:
        connection = self._servers.pop(name, None)
        if connection is not None:
            await connection.stop()
            self._sync()

    def attach(self, registry: ToolRegistry) -> None:
        """Keep `registry` (the assistant's) holding every enabled server's tools from now on."""
        self.registry = registry
        self._sync()

    def _sync(self) -> None:
        """Keep `registry` holding exactly the enabled servers' tools (kept through outages)."""
        if self.registry is None:
            return
        wanted = {name for names in self.tool_names().values() for name in names}
        for name in self._registered - wanted:
            self.registry.unregister(name)
        fresh = [
            t
            for t in self.tools(wanted)
            if t.name in self._registered or self.registry.get(t.name) is None
        ]  # never shadow a native tool
        for made in fresh:
            self.registry.register(made)
        self._registered = {t.name for t in fresh}

    async def _settle(self, servers: dict[str, McpConnection], wait: float) -> None:
        def tried(c: McpConnection) -> bool:
            return not c.config.enabled or c.connections > 0 or c.last_error is not None

        await asyncio.gather(*(c.wait_for(tried, wait) for c in servers.values()))

    async def ready(self, name: str, wait: float = 10.0) -> bool:
        """Wait until server `name` is connected (e.g. after a restart); False on timeout."""
        connection = self._servers.get(name)
        return connection is not None and await connection.wait_for(lambda c: c.connected, wait)

    # -- what the model sees -----------------------------------------------------------------

    def server_names(self) -> list[str]:
        return list(self._servers)

    def qualified_names(self) -> list[str]:
        """Every enabled server's tools, qualified, in one list."""
        return [name for names in self.tool_names().values() for name in names]

    def tool_names(self) -> dict[str, list[str]]:
        """Qualified tool names by server, for the enabled servers: the hints for the model."""
        return {
            name: [qualified_name(name, tool) for tool in c.tools]
            for name, c in self._servers.items()
            if c.config.enabled
        }

    def hints(self) -> str:
        """A few lines for the system prompt: the MCP tools by name and how to load them."""
        names = {server: tools for server, tools in self.tool_names().items() if tools}
        if not names:
            return ""
        lines = [f"- {server}: {', '.join(tools)}" for server, tools in names.items()]
        return (
            "MCP tools (names only; load the ones you need with "
            'mcp_server(action="use_tools", tools=[...]) before calling them):\n' + "\n".join(lines)
        )

    def resolve(self, name: str) -> tuple[str, str] | None:
        """`(server, tool)` for a qualified name of an enabled server's tool, else None."""
        for server, connection in self._servers.items():
            if connection.config.enabled and name.startswith(server + SEPARATOR):
                for tool in connection.tools:
                    if qualified_name(server, tool) == name:
                        return server, tool
        return None

    def tools(self, names: Iterable[str]) -> list[Tool]:
        """`Tool.from_schema` wrappers for the qualified names that exist (others skipped)."""
        out = []
        for name in names:
            found = self.resolve(name)
            if found is None:
                continue
            server, tool = found
            schema = self._servers[server].tools[tool]
            out.append(
                Tool.from_schema(
                    name,
                    schema.description or f"{tool} (MCP server {server})",
                    schema.input_schema,
                    self._caller(server, tool),
                    # The chokepoint judges what the tool does by its name: an MCP server's
                    # `delete_repository` is as destructive as a native one.
                    safety=("action", None),
                    timeout=self.call_timeout + 5,  # our own timeout answers first
                )
            )
        return out

    def _caller(self, server: str, tool: str) -> Callable[[dict[str, Any], Any], Any]:
        async def call(arguments: dict[str, Any], ctx: Any) -> ToolResult:
            return await self.call(server, tool, arguments)

        return call

    def status(self) -> dict[str, dict[str, Any]]:
        """Per server: enabled, connected, transport, tool names, last_error, restarts."""
        return {
            name: {
                "enabled": c.config.enabled,
                "connected": c.connected,
                "transport": "http" if c.config.url else "stdio",
                "tools": list(c.tools),
                "last_error": c.last_error,
                "restarts": c.restarts,
            }
            for name, c in self._servers.items()
        }

    # -- calls -------------------------------------------------------------------------------

    @traced("execute_tool {tool}", spans.tool_called)  # a span per call (SPEC OB-1)
    async def call(self, server: str, tool: str, arguments: dict[str, Any] | None) -> ToolResult:
        """Call one tool; every failure is a failed ToolResult the model can read."""
        connection = self._servers.get(server)
        if connection is None:
            known = ", ".join(self._servers) or "none"
            return ToolResult.failure(f"unknown MCP server {server!r} (configured: {known})")
        if not connection.config.enabled:
            return ToolResult.failure(
                f"MCP server {server!r} is disabled; "
                f'enable it with mcp_server(action="enable", name="{server}")'
            )
        session = connection.session
        if session is None:
            why = f" (last error: {connection.last_error})" if connection.last_error else ""
            return ToolResult.failure(
                f"MCP server {server!r} is reconnecting{why}; try again in a moment"
            )
        if tool not in connection.tools:
            return ToolResult.failure(
                f"MCP server {server!r} has no tool {tool!r}; it has {', '.join(connection.tools)}"
            )
        try:
            result = await session.call_tool(
                tool, arguments or {}, read_timeout_seconds=self.call_timeout
            )
        except MCPError as e:
            if e.code != mcp_types.CONNECTION_CLOSED:
                return ToolResult.failure(f"MCP server {server!r}: {e.message}")
            connection.mark_dead("the connection closed during a call")
            return ToolResult.failure(
                f"MCP server {server!r} closed the connection during the call (it may have "
                "crashed); it is reconnecting; try again in a moment"
            )
        except Exception as e:  # the transport broke (HTTP server gone, ...): reconnect
            connection.mark_dead(describe(e))
            return ToolResult.failure(
                f"MCP server {server!r} could not be reached ({describe(e)}); it is reconnecting"
            )
        return to_tool_result(result)


def to_tool_result(result: mcp_types.CallToolResult) -> ToolResult:
    """Structured content when the server sent it, else the text (JSON-decoded when it is)."""
    texts, others = [], []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            texts.append(block.text)
        else:  # images, audio, resources: described, not inlined into the model's context
            others.append({"type": block.type, **_describe_block(block)})
    text = "\n".join(texts)
    if result.is_error:
        return ToolResult.failure(text or "the MCP tool failed without a message")
    content: Any = result.structured_content
    if content is None:
        content = text
        with contextlib.suppress(ValueError):
            content = json.loads(text)
        if others:
            content = {"text": content, "attachments": others}
    return ToolResult.success(content)


def _describe_block(block: Any) -> dict[str, Any]:
    fields = {"mime_type": getattr(block, "mime_type", None), "uri": getattr(block, "uri", None)}
    return {k: v for k, v in fields.items() if v is not None}
