"""AS-5: the `mcp_server` tool, run through the registry's chokepoint as the model would call it:
list (names only), use_tools (ctx.state["mcp_tools"]), enable/disable, add (safety-checked)."""

from __future__ import annotations

import sys
from pathlib import Path

from nerve.mcp.client import McpClients
from nerve.tools import Services, ToolContext, ToolRegistry, ToolResult
from tests.mcp_client.conftest import FAKE, Open, crashing


def context(clients: McpClients | None) -> ToolContext:
    return ToolContext(user_id="asha", services=Services(mcp=clients))


async def run(ctx: ToolContext, **arguments: object) -> ToolResult:
    registry = ToolRegistry()
    registry.discover("nerve.tools.builtin")
    return await registry.execute("mcp_server", arguments, ctx)


async def test_list_shows_servers_and_tool_names_only(open_clients: Open) -> None:
    ctx = context(await open_clients([crashing()]))
    listed = await run(ctx, action="list")
    assert listed.ok, listed.error
    assert listed.content == {
        "servers": [{"name": "crashy", "enabled": True, "connected": True,
                     "tools": ["crashy__echo", "crashy__pid", "crashy__fail",
                               "crashy__drop_all_tables", "crashy__crash"]}],
        "in_use": [],
    }  # fmt: skip


async def test_use_tools_adds_qualified_names_to_the_conversation_state(
    open_clients: Open,
) -> None:
    ctx = context(await open_clients([crashing()]))
    used = await run(ctx, action="use_tools", tools=["crashy__echo"])
    assert used.ok, used.error
    assert ctx.state["mcp_tools"] == {"crashy__echo"}
    bare = await run(ctx, action="use_tools", name="crashy", tools=["pid"])
    assert bare.ok and ctx.state["mcp_tools"] == {"crashy__echo", "crashy__pid"}
    everything = await run(ctx, action="use_tools", name="crashy")
    assert everything.ok and len(ctx.state["mcp_tools"]) == 5

    wrong = await run(ctx, action="use_tools", tools=["crashy__ecko"])
    assert not wrong.ok and "did you mean crashy__echo" in str(wrong.error)


async def test_disable_drops_the_servers_tools_and_enable_brings_them_back(
    open_clients: Open,
) -> None:
    ctx = context(await open_clients([crashing()]))
    await run(ctx, action="use_tools", tools=["crashy__echo"])
    disabled = await run(ctx, action="disable", name="crashy")
    assert disabled.ok and disabled.content["enabled"] is False
    assert ctx.state["mcp_tools"] == set()
    assert ctx.services.mcp.tool_names() == {}
    enabled = await run(ctx, action="enable", name="crashy")
    assert enabled.ok and enabled.content["connected"] is True
    unknown = await run(ctx, action="enable", name="nope")
    assert not unknown.ok and "no MCP server 'nope'" in str(unknown.error)


async def test_add_registers_a_server_at_runtime(open_clients: Open) -> None:
    ctx = context(await open_clients([]))
    added = await run(ctx, action="add", name="extra", command=f"{sys.executable} {FAKE}")
    assert added.ok, added.error
    assert "extra__echo" in added.content["tools"]
    assert (await ctx.services.mcp.call("extra", "echo", {"text": "hi"})).ok
    again = await run(ctx, action="add", name="extra", url="http://127.0.0.1:1/mcp")
    assert not again.ok and "exists" in str(again.error)


async def test_add_with_a_dangerous_command_is_blocked_by_the_chokepoint(
    open_clients: Open,
) -> None:
    ctx = context(await open_clients([]))
    blocked = await run(ctx, action="add", name="evil", command="rm -rf / --no-preserve-root")
    assert not blocked.ok and blocked.blocked
    assert ctx.services.mcp.status() == {}


async def test_without_mcp_clients_list_is_empty_and_others_explain(open_clients: Open) -> None:
    ctx = context(None)
    assert (await run(ctx, action="list")).content["servers"] == []
    refused = await run(ctx, action="use_tools", tools=["x__y"])
    assert not refused.ok and "no MCP client" in str(refused.error)


async def test_a_destructive_mcp_tool_is_refused_by_the_chokepoint_before_it_runs(
    open_clients: Open, tmp_path: Path
) -> None:
    """SF/AS-1: MCP tools pass the same safety check as native ones (here: by the action name)."""
    clients = await open_clients([crashing()])
    registry = ToolRegistry()
    clients.attach(registry)
    marker = tmp_path / "ran"
    ctx = context(clients)
    refused = await registry.execute("crashy__drop_all_tables", {"marker": str(marker)}, ctx)
    assert refused.blocked and not refused.ok
    assert "drop" in (refused.error or "")
    assert not marker.exists()
    echoed = await registry.execute("crashy__echo", {"text": "still here"}, ctx)
    assert echoed.ok and echoed.content == {"result": "still here"}
