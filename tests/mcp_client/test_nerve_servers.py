"""AS-5 against nerve's own MCP server: `nerve mcp` spawned over stdio by McpClients, and
`nerve serve`'s `/mcp` over streamable HTTP; tools land in the registry under qualified names
and run through its chokepoint (schema validation before the server is asked)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import yaml

from nerve.config import Config
from nerve.config_sections import McpServerConfig
from nerve.mcp import TOOL_NAMES
from nerve.tools import ToolContext, ToolRegistry
from tests.conftest import RunningServer, make_config
from tests.fakes.upstream import FakeUpstream
from tests.mcp_client.conftest import Open

NERVE = str(Path(sys.executable).parent / "nerve")


def nerve_mcp(tmp_path: Path, upstream: FakeUpstream) -> McpServerConfig:
    config = tmp_path / "nerve.yaml"
    config.write_text(yaml.safe_dump({
        "providers": [{"name": "primary", "protocol": "openai",
                       "base_url": upstream.openai_base_url, "api_key": "sk-test"}],
        "routes": [{"name": "default", "model": {"provider": "primary", "model": "m1"}}],
        "probes": {"interval_seconds": 0},
    }))  # fmt: skip
    return McpServerConfig(
        name="nerve", command=NERVE, args=["mcp", "--config", str(config)],
        env={"NERVE_ADMIN_PASSWORD": "assistant-mcp-tests"},
    )  # fmt: skip


async def test_nerve_mcp_over_stdio_lists_tools_and_returns_structured_data(
    open_clients: Open, tmp_path: Path, upstream: FakeUpstream
) -> None:
    clients = await open_clients([nerve_mcp(tmp_path, upstream)])
    assert clients.status()["nerve"]["connected"], clients.status()
    assert set(clients.tool_names()["nerve"]) == {f"nerve__{name}" for name in TOOL_NAMES}

    verdict = await clients.call("nerve", "check_safety", {"kind": "shell", "content": "rm -rf /"})
    assert verdict.ok
    assert verdict.content["allowed"] is False and verdict.content["blocked_by"] == "rule"

    bad = await clients.call("nerve", "check_safety", {"kind": "shell"})  # the server says why
    assert not bad.ok and bad.error is not None and "'content'" in bad.error


async def test_nerve_serve_slash_mcp_over_http(
    open_clients: Open, serve: Callable[[Config], RunningServer], upstream: FakeUpstream
) -> None:
    server = serve(make_config({"primary": upstream}))
    clients = await open_clients([McpServerConfig(name="web", url=f"{server.url}/mcp")])
    assert clients.status()["web"] | {"tools": []} == {
        "enabled": True, "connected": True, "transport": "http", "tools": [],
        "last_error": None, "restarts": 0,
    }  # fmt: skip
    assert "web__check_safety" in clients.tool_names()["web"]
    verdict = await clients.call("web", "check_safety", {"kind": "sql", "content": "DROP TABLE x"})
    assert verdict.ok and verdict.content["allowed"] is False


async def test_the_registry_runs_mcp_tools_through_its_chokepoint(
    tmp_path: Path, upstream: FakeUpstream, serve: Callable[[Config], RunningServer]
) -> None:
    from nerve.mcp.client import McpClients

    server = serve(make_config({"primary": upstream}))
    registry = ToolRegistry()
    clients = McpClients([McpServerConfig(name="web", url=f"{server.url}/mcp")], registry=registry)
    await clients.start(wait=30)
    try:
        assert "web__check_safety" in registry.names()
        schema = registry.schemas("openai", names=["web__check_safety"])[0]["function"]
        assert schema["parameters"]["required"] == ["kind", "content"]
        ctx = ToolContext(user_id="asha")
        result = await registry.execute(
            "web__check_safety", '{"kind": "shell", "content": "ls"}', ctx
        )
        assert result.ok and result.content["allowed"] is True
        invalid = await registry.execute("web__check_safety", {"kind": "shell"}, ctx)
        assert not invalid.ok and "'content' is a required property" in str(invalid.error)

        await clients.set_enabled("web", False)  # disabled: out of the registry
        assert not [n for n in registry.names() if n.startswith("web__")]
    finally:
        await clients.stop()
    assert not [n for n in registry.names() if n.startswith("web__")]
