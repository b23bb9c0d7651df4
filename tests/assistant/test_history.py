"""History through memory (SPEC AS-2, ME-6, ME-9): turns recorded, past 20 turns folded into a
summary by the model, and never lost when the summarizer fails (memory lost at compaction)."""

from __future__ import annotations

import asyncio
from typing import Any

from nerve.memory import Memory
from nerve.memory.store import Query
from nerve.server import NerveApp
from nerve.tools import builtin_registry
from nerve.tools.result import Services
from tests.assistant.conftest import Make, ask, call
from tests.fakes.upstream import FakeUpstream, Reply


async def sent(upstream: FakeUpstream, n: int) -> list[dict[str, Any]]:
    return [r.body for r in await asyncio.to_thread(upstream.wait_for_requests, n)]


async def turns(memory: Memory, session: str = "test:c1") -> list[dict[str, Any]]:
    found = await memory.store.query(Query("asha", kind="turn", session_id=session))
    return [t.data for t in sorted(found, key=lambda r: r.created_at)]


async def summaries(memory: Memory) -> list[str]:
    found = await memory.store.query(Query("asha", kind="summary", session_id="test:c1"))
    return [str(r.data["text"]) for r in found]


async def test_the_next_turn_sees_the_previous_ones_in_order(
    upstream: FakeUpstream, make: Make
) -> None:
    upstream.script(Reply(text="Hello Asha."), Reply(text="You are Asha."))
    assistant = make()
    await ask(assistant, "I am Asha")
    await ask(assistant, "who am I?")
    second = (await sent(upstream, 2))[1]["messages"]
    assert [(m["role"], m["content"]) for m in second[1:]] == [
        ("user", "I am Asha"), ("assistant", "Hello Asha."), ("user", "who am I?"),
    ]  # fmt: skip


async def test_past_20_turns_the_older_ones_fold_into_a_summary(
    upstream: FakeUpstream, make: Make, nerve_app: NerveApp
) -> None:
    upstream.script(*[Reply(text=f"answer {i}") for i in range(11)])
    upstream.script(Reply(text="SUMMARY: Asha asked eleven things."), Reply(text="fine"))
    assistant = make()
    for i in range(11):  # 22 turns: one past the 20
        await ask(assistant, f"question {i}")
    summary_request = (await sent(upstream, 12))[11]
    assert "question 0" in summary_request["messages"][0]["content"]
    assert await summaries(nerve_app.memory) == ["SUMMARY: Asha asked eleven things."]
    kept = await turns(nerve_app.memory)
    assert len(kept) == 10 and kept[0]["content"] == "question 6"
    await ask(assistant, "and now?")
    last = (await sent(upstream, 13))[12]["messages"]
    assert "SUMMARY: Asha asked eleven things." in last[0]["content"]
    assert last[1]["content"] == "question 6" and last[-1]["content"] == "and now?"


async def test_when_the_summarizer_fails_every_turn_is_kept_and_it_tries_again(
    upstream: FakeUpstream, make: Make, nerve_app: NerveApp
) -> None:
    upstream.script(*[Reply(text=f"answer {i}") for i in range(11)])
    upstream.script(Reply(status=500))  # the summary call fails (after the gateway's fallbacks)
    assistant = make()
    for i in range(11):
        out = await ask(assistant, f"question {i}")
    assert out.text == "answer 10"  # the user still got the answer
    assert len(await turns(nerve_app.memory)) == 22 and await summaries(nerve_app.memory) == []
    upstream.script(Reply(text="answer 11"), Reply(text="SUMMARY: all of it."))
    await ask(assistant, "question 11")
    assert await summaries(nerve_app.memory) == ["SUMMARY: all of it."]
    retry = (await sent(upstream, 14))[13]["messages"][0]["content"]
    assert "question 0" in retry and "question 6" in retry and "question 7" not in retry
    assert len(await turns(nerve_app.memory)) == 10


async def test_memory_context_and_open_tasks_sit_at_their_fixed_places(
    upstream: FakeUpstream, make: Make, nerve_app: NerveApp
) -> None:
    memory = nerve_app.memory
    await memory.store_fact("asha", "asha", "favourite_city", "Chennai", 0.9)
    tools = builtin_registry(plugins=False)
    assistant = make(tools, Services(memory=memory, config=nerve_app.config))
    upstream.script(
        Reply(tool_calls=[call("task", {"action": "add", "title": "file the tax return"})]),
        Reply(text="Added."), Reply(text="ok"),
    )  # fmt: skip
    assert (await ask(assistant, "remind me to file the tax return")).text == "Added."
    await ask(assistant, "what now?")
    system = (await sent(upstream, 3))[2]["messages"][0]["content"]
    tools_at, memory_at = system.index("Tools you can call now"), system.index("<memory>")
    tasks_at = system.index("<open_tasks>")
    assert tools_at < memory_at < tasks_at < system.index("Current time:")
    assert "favourite_city: Chennai" in system[memory_at:tasks_at]
    assert "- file the tax return (id " in system[tasks_at:]


async def test_tool_calls_are_recorded_as_perception_events(
    upstream: FakeUpstream, make: Make, nerve_app: NerveApp
) -> None:
    upstream.script(Reply(tool_calls=[call("nope", {})]), Reply(text="ok"))
    await ask(make(), "x")
    events = await nerve_app.memory.store.query(Query("asha", kind="event", session_id="test:c1"))
    assert [(e.intent, e.data["tool"], e.data["success"]) for e in events] == [
        ("body_tool", "nope", False)
    ]
