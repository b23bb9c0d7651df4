"""The bus (issue 7): Inbound to the agent, Outbound to the channel named in it; the assistant
serving a bus sends typing then the reply, and a turn that fails still answers."""

from __future__ import annotations

import asyncio
from typing import Any

from nerve.assistant import Assistant, Bus, Inbound, Outbound
from nerve.server import NerveApp
from nerve.tools import ToolRegistry
from nerve.tools.result import Services
from tests.assistant.conftest import Make
from tests.fakes.upstream import FakeUpstream, Reply


async def take(stream: Any, n: int) -> list[Outbound]:
    async with asyncio.timeout(10):
        return [await anext(stream) for _ in range(n)]


async def test_each_channel_gets_only_its_messages_even_those_sent_before_it_listened() -> None:
    bus = Bus()
    await bus.deliver(Outbound("discord", "d1", "early"))
    await bus.deliver(Outbound("web", "w1", "for web"))
    await bus.publish(Inbound("web", "w1", "asha", "hi"))
    assert [o.text for o in await take(bus.subscribe("web"), 1)] == ["for web"]
    assert [o.text for o in await take(bus.subscribe("discord"), 1)] == ["early"]
    got = await bus.next_inbound()
    assert (got.channel, got.text, len(got.id)) == ("web", "hi", 32)


async def test_serving_a_bus_sends_typing_then_the_reply_to_each_channel(
    upstream: FakeUpstream, make: Make
) -> None:
    bus = Bus()
    upstream.script(Reply(text="answer"), Reply(text="answer"))
    serving = asyncio.create_task(make().run(bus))
    first, second = Inbound("web", "w1", "asha", "a"), Inbound("discord", "d9", "ravi", "b")
    await bus.publish(first)
    await bus.publish(second)
    web, feed = [], bus.subscribe("web")
    while not web or web[-1].kind != "message":  # the web chat streams: deltas, then the reply
        web += await take(feed, 1)
    assert [(o.kind, o.reply_to, o.chat_id) for o in (web[0], web[-1])] == [
        ("typing", first.id, "w1"), ("message", first.id, "w1"),
    ]  # fmt: skip
    deltas = web[1:-1]
    assert deltas and {o.kind for o in deltas} == {"delta"}
    assert "".join(o.text for o in deltas) == web[-1].text == "answer"
    discord = await take(bus.subscribe("discord"), 2)  # Discord shows the whole reply once
    assert [(o.kind, o.text) for o in discord] == [("typing", ""), ("message", "answer")]
    serving.cancel()
    await asyncio.gather(serving, return_exceptions=True)


async def test_a_turn_that_fails_unexpectedly_still_answers(nerve_app: NerveApp) -> None:
    async def broken(body: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("wire fell out")

    assistant = Assistant(
        nerve_app.config, ask=broken, memory=nerve_app.memory, tools=ToolRegistry(),
        services=Services(),
    )  # fmt: skip
    out = await assistant.reply(Inbound("web", "w1", "asha", "hi"))
    assert "something went wrong" in out.text and "wire fell out" in out.text
