"""Token use per turn (issue 7: runaway token cost): recorded per conversation, capped per turn,
and the hint-only MCP tools that keep the prompt small."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from nerve.assistant import Inbound
from nerve.memory.store import Query
from nerve.server import NerveApp
from nerve.tools import Tool, ToolContext, ToolRegistry, tool
from nerve.tools.result import Services
from tests.assistant.conftest import Make, ask, call
from tests.fakes.upstream import FakeUpstream, Reply

USAGE = {"prompt_tokens": 70, "completion_tokens": 10, "total_tokens": 80}


@tool(description="Count.")
async def count(ctx: ToolContext, n: int) -> int:
    return n + 1


@pytest.mark.parametrize("assistant_settings", [{"max_tokens_per_turn": 150}])
async def test_a_turn_stops_before_the_call_that_would_pass_the_token_cap(
    upstream: FakeUpstream, make: Make, nerve_app: NerveApp
) -> None:
    upstream.script(*[Reply(tool_calls=[call("count", {"n": 1})], usage=USAGE)] * 5)
    assistant = make(ToolRegistry([count]))
    out = await ask(assistant, "count forever")
    assert "assistant.max_tokens_per_turn" in out.text and "150" in out.text
    assert len(upstream.requests) == 1  # round 2 would pass the cap: it is never sent
    [conv] = assistant.conversations.values()
    assert conv.tokens == 80
    turns = await nerve_app.memory.store.query(Query("asha", kind="turn"))
    answer = next(t for t in turns if t.data["role"] == "assistant")
    assert answer.data["tokens"] == 80 and answer.data["stop"] == "token_cap"


async def test_token_use_adds_up_per_conversation(upstream: FakeUpstream, make: Make) -> None:
    upstream.script(
        Reply(tool_calls=[call("count", {"n": 1})], usage=USAGE), Reply(text="2", usage=USAGE),
        Reply(text="again", usage=USAGE),
    )  # fmt: skip
    assistant = make(ToolRegistry([count]))
    await ask(assistant, "count")
    await ask(assistant, "again")
    [conv] = assistant.conversations.values()
    assert conv.tokens == 240 and conv.turns == 2


class FakeMcp:
    """What the assistant reads from `services.mcp`: the names of every MCP tool."""

    def __init__(self, names: list[str]) -> None:
        self.names = names

    def tool_names(self) -> list[str]:
        return list(self.names)


async def test_mcp_tools_go_as_names_until_the_conversation_enables_them(
    upstream: FakeUpstream, make: Make
) -> None:
    async def run(args: dict[str, Any], ctx: ToolContext) -> str:
        return "files"

    names = [f"fs__tool{i}" for i in range(5)]
    tools = ToolRegistry([count, *(Tool.from_schema(n, "An MCP tool.", {"type": "object"}, run)
                                   for n in names)])  # fmt: skip
    assistant = make(tools, Services(mcp=FakeMcp(names)))
    upstream.script(Reply(text="one"), Reply(text="two"))
    await ask(assistant, "hi")
    [conv] = assistant.conversations.values()
    conv.state["mcp_tools"] = ["fs__tool3"]  # what mcp_server(action="use_tools") records
    await assistant.reply(Inbound("test", "c1", "asha", "again"))
    first, second = (r.body for r in await asyncio.to_thread(upstream.wait_for_requests, 2))
    assert [t["function"]["name"] for t in first["tools"]] == ["count"]
    system = first["messages"][0]["content"]
    assert "fs__tool0, fs__tool1, fs__tool2, fs__tool3, fs__tool4" in system
    assert 'mcp_server(action="use_tools"' in system
    assert [t["function"]["name"] for t in second["tools"]] == ["count", "fs__tool3"]
    assert "fs__tool3" not in second["messages"][0]["content"].split("More tools")[1]


async def test_mcp_tools_enabled_during_a_turn_are_offered_from_the_next_round(
    upstream: FakeUpstream, make: Make
) -> None:
    async def run(args: dict[str, Any], ctx: ToolContext) -> str:
        return "files"

    @tool(description="Load MCP tools (what mcp_server use_tools does).")
    async def use(ctx: ToolContext, name: str) -> str:
        ctx.state.setdefault("mcp_tools", []).append(name)
        return "loaded"

    tools = ToolRegistry([use, Tool.from_schema("fs__read", "Read.", {"type": "object"}, run)])
    upstream.script(
        Reply(tool_calls=[call("use", {"name": "fs__read"})]),
        Reply(tool_calls=[call("fs__read", {}, "2")]),
        Reply(text="read it"),
    )
    out = await ask(make(tools, Services(mcp=FakeMcp(["fs__read"]))), "read")
    assert out.text == "read it"
    sent = [r.body for r in await asyncio.to_thread(upstream.wait_for_requests, 3)]
    assert [[t["function"]["name"] for t in b["tools"]] for b in sent] == [
        ["use"], ["use", "fs__read"], ["use", "fs__read"],
    ]  # fmt: skip
