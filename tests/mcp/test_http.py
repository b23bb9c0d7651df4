"""SPEC PR-3: `nerve serve` also serves the tools over streamable HTTP at /mcp, in the same
process as the REST API, behind the gateway's API keys and DNS-rebinding protection."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import httpx2
import pytest
from mcp import Client, ClientSession
from mcp.client.streamable_http import streamable_http_client

from nerve.config import Config
from nerve.mcp import TOOL_NAMES
from tests.conftest import RunningServer, make_config
from tests.fakes.upstream import FakeUpstream

Serve = Callable[[Config], RunningServer]
INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "raw", "version": "0"}},
}  # fmt: skip
MCP_HEADERS = {"accept": "application/json, text/event-stream"}


@pytest.fixture
def server(serve: Serve, upstream: FakeUpstream) -> RunningServer:
    return serve(make_config({"primary": upstream}))


async def test_the_sdk_client_lists_and_calls_tools_at_slash_mcp(server: RunningServer) -> None:
    async with (
        streamable_http_client(f"{server.url}/mcp") as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        names = {tool.name for tool in (await session.list_tools()).tools}
        verdict = await session.call_tool(
            "check_safety", {"kind": "sql", "content": "DROP TABLE users"}
        )
        stored = await session.call_tool("store_memory", {
            "user_id": "asha", "intent": "preference", "tier": "semantic",
            "data": {"text": "prefers replies in Tamil"}, "importance_score": 0.8})  # fmt: skip
    assert names == set(TOOL_NAMES)
    assert verdict.structured_content is not None
    assert verdict.structured_content["allowed"] is False
    assert stored.structured_content is not None and stored.structured_content["stored"] is True

    # The same process, the same memory: the REST API sees what the MCP tool stored.
    async with httpx.AsyncClient(base_url=server.url) as rest:
        recalled = await rest.post("/api/memory/recall", json={"user_id": "asha"})
    assert [r["id"] for r in recalled.json()["records"]] == [stored.structured_content["id"]]


@pytest.mark.parametrize("mode", ["auto", "legacy"])  # legacy: the handshake most hosts speak
async def test_the_trailing_slash_path_works_too_in_both_protocol_eras(
    server: RunningServer, mode: str
) -> None:
    async with Client(f"{server.url}/mcp/", mode=mode) as client:
        listed = await client.list_tools()
        result = await client.call_tool("process", {"text": "rm -rf /", "user_id": "asha"})
    assert len(listed.tools) == len(TOOL_NAMES)
    assert result.structured_content is not None
    assert result.structured_content["safety"]["allowed"] is False


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"host": "evil.example:80"}, 421),  # a rebinding attacker's hostname
        ({"host": "evil.example"}, 421),
        ({"origin": "http://evil.example"}, 403),  # a web page on another origin
    ],
)
async def test_without_api_keys_only_loopback_hosts_and_origins_are_served(
    server: RunningServer, headers: dict[str, str], status: int
) -> None:
    async with httpx.AsyncClient(base_url=server.url) as raw:
        refused = await raw.post("/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **headers})
    assert refused.status_code == status


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "localhost:8080", "[::1]"])
async def test_loopback_host_headers_with_or_without_a_port_are_served(
    server: RunningServer, host: str
) -> None:
    async with httpx.AsyncClient(base_url=server.url) as raw:
        answered = await raw.post("/mcp", json=INITIALIZE, headers={**MCP_HEADERS, "host": host})
    assert answered.status_code == 200, answered.text


class TestWithApiKeys:
    @pytest.fixture
    def server(self, serve: Serve, upstream: FakeUpstream) -> RunningServer:
        return serve(make_config({"primary": upstream}, server={"api_keys": ["sk-nerve-1"]}))

    async def test_no_key_is_refused_with_401(self, server: RunningServer) -> None:
        async with httpx.AsyncClient(base_url=server.url) as raw:
            missing = await raw.post("/mcp", json=INITIALIZE, headers=MCP_HEADERS)
            bad_key = {**MCP_HEADERS, "authorization": "Bearer nope"}
            wrong = await raw.post("/mcp/", json=INITIALIZE, headers=bad_key)
        assert missing.status_code == 401
        assert "Authorization: Bearer" in missing.json()["error"]["message"]
        assert wrong.status_code == 401
        assert wrong.json()["error"]["message"] == "invalid API key"

    async def test_the_key_opens_it_to_the_sdk_client(self, server: RunningServer) -> None:
        headers = {"authorization": "Bearer sk-nerve-1"}
        async with (
            httpx2.AsyncClient(headers=headers) as http,
            streamable_http_client(f"{server.url}/mcp", http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            result = await session.call_tool("check_safety", {"kind": "text", "content": "hello"})
        assert not result.is_error
        assert result.structured_content is not None
        assert result.structured_content["allowed"] is True

    async def test_with_a_key_any_host_name_is_served(self, server: RunningServer) -> None:
        """Keys stand in for the Host check: nerve may be reached by a LAN or DNS name."""
        headers = {**MCP_HEADERS, "authorization": "Bearer sk-nerve-1", "host": "nerve.internal"}
        async with httpx.AsyncClient(base_url=server.url) as raw:
            answered = await raw.post("/mcp", json=INITIALIZE, headers=headers)
        assert answered.status_code == 200, answered.text
