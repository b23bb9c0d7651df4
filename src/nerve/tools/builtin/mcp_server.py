"""`mcp_server`: the model's handle on the MCP servers (AS-5): list, enable, disable, use, add.

Only native tool schemas and MCP tool *names* reach the model; `use_tools` puts the named tools
(qualified `<server>__<tool>`, or bare names with `name=<server>`, or every tool of `name`) into
`ctx.state["mcp_tools"]`, the per-conversation set the agent loop reads to send their schemas.
`add` registers a server for this process (a command line, checked by the safety chokepoint as
shell, or a URL); it lasts until restart or the next config reload that names it.

The MCP clients arrive as `ctx.services.mcp` (nerve.mcp.client.McpClients, duck-typed
here: tools never import the assistant).
"""

from __future__ import annotations

import difflib
import shlex
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError

from nerve.config_sections import McpServerConfig
from nerve.tools.base import tool
from nerve.tools.result import ToolContext, ToolError

__all__ = ["STATE_KEY", "mcp_server"]

STATE_KEY = "mcp_tools"
CONNECT_TIMEOUT = 20.0  # `add` waits this long for the new server's tools


@tool(
    description=(
        "MCP servers: list them and their tool names; use_tools loads the named tools "
        "(qualified '<server>__<tool>') so you can call them; enable or disable a server; "
        "add a server by command line or URL."
    ),
    safety=("shell", "command"),  # `add` with a command spawns a process: judged as shell
    timeout=CONNECT_TIMEOUT + 10,
)
async def mcp_server(
    ctx: ToolContext,
    action: Literal["list", "enable", "disable", "use_tools", "add"],
    name: Annotated[str | None, Field(description="the server's name")] = None,
    tools: Annotated[list[str] | None, Field(description="tool names to load (use_tools)")] = None,
    command: Annotated[
        str | None, Field(description="command line of a stdio server (add)")
    ] = None,
    url: Annotated[str | None, Field(description="URL of a streamable HTTP server (add)")] = None,
) -> dict[str, Any]:
    mcp = ctx.services.mcp
    in_use: set[str] = set(ctx.state.get(STATE_KEY) or ())
    ctx.state[STATE_KEY] = in_use
    if mcp is None:
        if action == "list":
            return {"servers": [], "in_use": [], "note": "no MCP servers are configured"}
        raise ToolError("no MCP client is running (assistant.mcp_servers in the config)")
    if action == "list":
        return _listing(mcp, in_use)
    if action == "add":
        return await _add(mcp, name, command, url)
    server = _known_server(mcp, name) if name is not None or action != "use_tools" else None
    if action in ("enable", "disable"):
        assert server is not None
        await mcp.set_enabled(server, action == "enable")
        if action == "disable":
            in_use -= {n for n in in_use if n.startswith(server + "__")}
        entry: dict[str, Any] = _listing(mcp, in_use)["servers"][list(mcp.status()).index(server)]
        return entry
    loaded = _resolve_all(mcp, server, tools)
    in_use |= set(loaded)
    return {
        "loaded": loaded,
        "in_use": sorted(in_use),
        "note": "call them by these names; their schemas are sent from your next step",
    }


def _listing(mcp: Any, in_use: set[str]) -> dict[str, Any]:
    names = mcp.tool_names()
    servers = [
        {"name": server, "enabled": s["enabled"], "connected": s["connected"],
         "tools": names.get(server, []),
         **({"last_error": s["last_error"]} if s["last_error"] else {})}
        for server, s in mcp.status().items()
    ]  # fmt: skip
    return {"servers": servers, "in_use": sorted(in_use)}


def _known_server(mcp: Any, name: str | None) -> str:
    servers = list(mcp.status())
    if not name:
        raise ToolError(f"'name' is required: one of {', '.join(servers) or 'none'}")
    if name not in servers:
        raise ToolError(f"no MCP server {name!r}; servers: {', '.join(servers) or 'none'}")
    return name


def _resolve_all(mcp: Any, server: str | None, tools: list[str] | None) -> list[str]:
    if not tools:
        if server is None:
            raise ToolError("'tools' is required: names as listed by action 'list'")
        if not mcp.tool_names().get(server):
            raise ToolError(f"MCP server {server!r} has no tools (is it enabled and connected?)")
        return [str(n) for n in mcp.tool_names()[server]]
    loaded: list[str] = []
    unknown: list[str] = []
    for item in tools:
        candidates = [item] + ([f"{server}__{item}"] if server else [])
        found = next((c for c in candidates if mcp.resolve(c) is not None), None)
        (loaded if found else unknown).append(found or item)
    if unknown:
        known = [n for names in mcp.tool_names().values() for n in names]
        hints = {u: difflib.get_close_matches(u, known, n=3) for u in unknown}
        said = "; ".join(f"{u!r}" + (f" (did you mean {', '.join(h)}?)" if h else "")
                         for u, h in hints.items())  # fmt: skip
        raise ToolError(f"unknown MCP tools: {said}. Nothing was loaded; list them first")
    return loaded


async def _add(mcp: Any, name: str | None, command: str | None, url: str | None) -> dict[str, Any]:
    if not name:
        raise ToolError("'name' is required to add a server")
    if name in mcp.status():
        raise ToolError(f"an MCP server named {name!r} exists; enable/disable it, or pick a name")
    if (command is None) == (url is None):
        raise ToolError("give exactly one of 'command' (a stdio server) or 'url' (HTTP)")
    try:
        words = shlex.split(command) if command is not None else []
        config = McpServerConfig(
            name=name, command=words[0] if words else None, args=words[1:], url=url
        )
    except (ValueError, IndexError, ValidationError) as e:
        raise ToolError(f"cannot add MCP server {name!r}: {e}") from None
    await mcp.add(config, wait=CONNECT_TIMEOUT)
    status = mcp.status()[name]
    if not status["connected"]:
        raise ToolError(
            f"MCP server {name!r} was added but is not connected: {status['last_error']}; "
            "it keeps retrying (disable it to stop)"
        )
    return {"added": name, "tools": mcp.tool_names().get(name, [])}
