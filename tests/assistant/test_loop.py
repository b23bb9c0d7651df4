"""The tool-call loop (SPEC AS-1, AS-3): tools called, errors as data, limits that end clearly.

A real gateway stands in front of the fake upstream; tools are real `@tool` functions run
through the registry's chokepoint.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from nerve.tools import ToolContext, ToolRegistry, tool
from tests.assistant.conftest import Make, ask, call, tool_messages
from tests.fakes.upstream import FakeUpstream, Reply


@tool(description="Weather for a city.")
async def lookup(ctx: ToolContext, city: str) -> dict[str, Any]:
    return {"city": city, "sky": "sunny", "asked_by": ctx.user_id}


@tool(description="Run a shell command.", safety=("shell", "command"))
async def run_command(ctx: ToolContext, command: str) -> str:
    return "ran"


def registry(*tools: Any) -> ToolRegistry:
    return ToolRegistry(tools or [lookup])


async def bodies(upstream: FakeUpstream, n: int) -> list[dict[str, Any]]:
    return [r.body for r in await asyncio.to_thread(upstream.wait_for_requests, n)]


async def test_a_turn_calls_the_tool_the_model_asks_for_then_answers(
    upstream: FakeUpstream, make: Make
) -> None:
    upstream.script(
        Reply(tool_calls=[call("lookup", {"city": "Pune"})]), Reply(text="Sunny in Pune.")
    )
    out = await ask(make(registry()), "weather in Pune?")
    assert out.text == "Sunny in Pune." and out.kind == "message" and out.channel == "test"
    first, second = await bodies(upstream, 2)
    assert [t["function"]["name"] for t in first["tools"]] == ["lookup"]
    assert first["messages"][-1] == {"role": "user", "content": "weather in Pune?"}
    assert second["messages"][-2]["tool_calls"][0]["function"]["name"] == "lookup"
    [result] = tool_messages(second)
    assert result["tool_call_id"] == "call_1"
    assert json.loads(result["content"]) == {"city": "Pune", "sky": "sunny", "asked_by": "asha"}


async def test_bad_arguments_go_back_to_the_model_as_an_error_and_it_tries_again(
    upstream: FakeUpstream, make: Make
) -> None:
    upstream.script(
        Reply(tool_calls=[call("lookup", {"town": "Pune"})]),
        Reply(tool_calls=[call("lookup", "{not json")]),
        Reply(tool_calls=[call("lookup", {"city": "Pune"})]),
        Reply(text="Sunny."),
    )
    out = await ask(make(registry()), "weather?")
    assert out.text == "Sunny."
    sent = await bodies(upstream, 4)
    wrong_field = json.loads(tool_messages(sent[1])[0]["content"])["error"]
    assert "invalid arguments for lookup" in wrong_field and "city" in wrong_field
    assert "not valid JSON" in json.loads(tool_messages(sent[2])[-1]["content"])["error"]
    assert json.loads(tool_messages(sent[3])[-1]["content"])["sky"] == "sunny"


async def test_unknown_tools_and_blocked_commands_are_results_not_crashes(
    upstream: FakeUpstream, make: Make
) -> None:
    upstream.script(
        Reply(
            tool_calls=[call("nope", {}, "a"), call("run_command", {"command": "rm -rf /"}, "b")]
        ),
        Reply(text="I could not do that."),
    )
    out = await ask(make(registry(lookup, run_command)), "wipe the disk")
    assert out.text == "I could not do that."
    unknown, blocked = (
        json.loads(m["content"]) for m in tool_messages((await bodies(upstream, 2))[1])
    )
    assert "unknown tool 'nope'" in unknown["error"]
    assert blocked["blocked"] is True and blocked["error"].startswith("blocked by safety")


@pytest.mark.parametrize("assistant_settings", [{"max_rounds": 3}])
async def test_a_model_that_calls_tools_forever_is_stopped_at_max_rounds(
    upstream: FakeUpstream, make: Make
) -> None:
    upstream.script(*[Reply(tool_calls=[call("lookup", {"city": "Pune"})]) for _ in range(10)])
    out = await ask(make(registry()), "loop please")
    assert "stopped after 3 rounds" in out.text and "assistant.max_rounds" in out.text
    assert "lookup" in out.text
    assert len(upstream.requests) == 3


async def test_two_tool_calls_of_one_round_run_concurrently(
    upstream: FakeUpstream, make: Make
) -> None:
    started = {"a": asyncio.Event(), "b": asyncio.Event()}

    @tool(description="Waits for its sibling.")
    async def meet(ctx: ToolContext, me: str, other: str) -> str:
        started[me].set()
        async with asyncio.timeout(5):  # run one after the other, this would never be set
            await started[other].wait()
        return f"{me} met {other}"

    upstream.script(
        Reply(tool_calls=[call("meet", {"me": "a", "other": "b"}, "1"),
                          call("meet", {"me": "b", "other": "a"}, "2")]),
        Reply(text="Both met."),
    )  # fmt: skip
    out = await ask(make(registry(meet)), "meet")
    assert out.text == "Both met."
    results = [m["content"] for m in tool_messages((await bodies(upstream, 2))[1])]
    assert results == ['"a met b"', '"b met a"']


async def test_results_older_than_the_last_round_are_shortened(
    upstream: FakeUpstream, make: Make
) -> None:
    @tool(description="A long answer.")
    async def big(ctx: ToolContext, n: int) -> str:
        return f"result-{n} " + "x" * 2000

    upstream.script(
        Reply(tool_calls=[call("big", {"n": 1}, "1")]),
        Reply(tool_calls=[call("big", {"n": 2}, "2")]),
        Reply(text="done"),
    )
    assert (await ask(make(registry(big)), "go")).text == "done"
    third = (await bodies(upstream, 3))[2]
    old, last = tool_messages(third)
    assert (
        old["content"].startswith("[earlier tool result, 2011 chars]") and len(old["content"]) < 250
    )
    assert "result-1" in old["content"]
    assert len(last["content"]) > 2000 and "result-2" in last["content"]
    assert all("_short" not in m for m in third["messages"])


async def test_a_provider_failure_is_a_clear_reply_not_a_crash(
    upstream: FakeUpstream, make: Make
) -> None:
    upstream.script(Reply(status=500))
    out = await ask(make(registry()), "hello")
    assert out.text.startswith("Sorry, I could not reach the language model")
    assert "try again" in out.text
