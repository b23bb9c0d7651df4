"""AS-5 end to end: the assistant over a real NerveApp and the fake LLM, with McpClients as
`services.mcp` attached to its registry: MCP tools go as names until the model calls
mcp_server(use_tools); then it calls one, and the next turn carries that tool's schema."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from nerve.assistant import Inbound
from nerve.assistant.build import assistant_from_app
from nerve.server import NerveApp, build_app
from nerve.tools import Services, ToolRegistry
from nerve.tools.builtin.mcp_server import mcp_server
from tests.conftest import make_config
from tests.fakes.upstream import FakeUpstream, Reply
from tests.mcp_client.conftest import Open, crashing


@pytest.fixture
async def nerve_app(
    upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[NerveApp]:
    monkeypatch.setenv("NERVE_ADMIN_PASSWORD", "assistant-mcp-tests")
    config = make_config(
        {"primary": upstream}, probes={"interval_seconds": 0}, server={"config_poll_seconds": 0}
    )
    app = build_app(config)
    async with app.api.router.lifespan_context(app.api):
        yield app


def call(name: str, arguments: dict[str, Any], ident: str) -> dict[str, Any]:
    return {"id": ident, "type": "function", "function": {"name": name, "arguments": arguments}}


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools", [])]


async def test_use_tools_then_call_then_the_schema_stays_for_the_conversation(
    upstream: FakeUpstream, nerve_app: NerveApp, open_clients: Open
) -> None:
    clients = await open_clients([crashing()])
    registry = ToolRegistry([mcp_server])
    clients.attach(registry)
    services = Services(mcp=clients, safety=nerve_app.pipeline.safety, config=nerve_app.config)
    assistant = assistant_from_app(nerve_app, tools=registry, services=services)
    upstream.script(
        Reply(tool_calls=[call("mcp_server", {"action": "use_tools", "tools": ["crashy__echo"]},
                               "c1")]),
        Reply(tool_calls=[call("crashy__echo", {"text": "namaste"}, "c2")]),
        Reply(text="it said namaste"),
        Reply(text="second turn"),
    )  # fmt: skip
    first = await assistant.reply(Inbound("test", "chat", "asha", "echo namaste"))
    assert first.text == "it said namaste"
    await assistant.reply(Inbound("test", "chat", "asha", "again"))
    bodies = [r.body for r in await asyncio.to_thread(upstream.wait_for_requests, 4)]

    assert tool_names(bodies[0]) == ["mcp_server"]  # MCP tools only by name
    assert "crashy__echo" in bodies[0]["messages"][0]["content"]
    answers = [m["content"] for m in bodies[2]["messages"] if m["role"] == "tool"]
    assert "namaste" in answers[-1]
    assert tool_names(bodies[3]) == ["mcp_server", "crashy__echo"]  # loaded for the conversation
