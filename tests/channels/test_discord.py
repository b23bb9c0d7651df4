"""The Discord channel end to end: the unmodified discord.py client against a fake Discord
(REST + gateway websocket) on 127.0.0.1, and a minimal agent on the bus's contract."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import discord
import pytest
import yaml

from nerve.assistant.bus import Bus, Outbound
from nerve.assistant.jobs import Scheduler, bus_delivery, job_store_from_url
from nerve.channels.discord import DiscordChannel, split_message
from nerve.gateway.resilience import ManualClock
from tests.fakes.discord import BOT_ID, FakeDiscord
from tests.fakes.upstream import FakeUpstream, Reply
from tests.jobs.conftest import START
from tests.memory.conftest import backend, postgres_schema, storage_url  # noqa: F401 - fixtures


@pytest.fixture
async def fake(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeDiscord]:
    # The channel points discord.py's process-wide settings at the fake; restore them after.
    monkeypatch.setattr(discord.http.Route, "BASE", discord.http.Route.BASE)
    gateway = discord.gateway.DiscordWebSocket
    monkeypatch.setattr(gateway, "DEFAULT_GATEWAY", gateway.DEFAULT_GATEWAY)
    server = await FakeDiscord().start()
    yield server
    await server.stop()


@pytest.fixture
async def bus() -> Bus:
    return Bus()


@pytest.fixture
async def bot(fake: FakeDiscord, bus: Bus) -> AsyncIterator[DiscordChannel]:
    channel = DiscordChannel("t0ken", api_base=fake.api, gateway_url=fake.gateway)
    await channel.start(bus)
    await fake.wait_sessions(1)
    yield channel
    await channel.stop()


@pytest.fixture
async def agent(bus: Bus) -> AsyncIterator[list[Any]]:
    """The bus contract: each Inbound answered with typing, then 'echo: <text>'."""
    seen: list[Any] = []

    async def run() -> None:
        while True:
            msg = await bus.next_inbound()
            seen.append(msg)
            await bus.deliver(Outbound(msg.channel, msg.chat_id, kind="typing"))
            await bus.deliver(
                Outbound(msg.channel, msg.chat_id, f"echo: {msg.text}", reply_to=msg.id)
            )

    task = asyncio.create_task(run())
    yield seen
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


async def _until_message(fake: FakeDiscord) -> list[tuple[str, str, Any]]:
    """The REST calls up to and including the next message the bot sends."""
    calls = []
    while not calls or calls[-1][0:2] != ("POST", calls[-1][1]) or "messages" not in calls[-1][1]:
        calls.append(await fake.next_call())
    return calls


async def test_a_mention_gets_typing_then_a_reply(
    fake: FakeDiscord, bot: DiscordChannel, agent: list[Any]
) -> None:
    assert fake.calls[:2] == [
        ("GET", "/users/@me", None),
        ("GET", "/oauth2/applications/@me", None),
    ]
    await fake.post("77", f"<@{BOT_ID}> what's up?")
    calls = await _until_message(fake)
    assert [c[:2] for c in calls] == [
        ("GET", "/users/@me"), ("GET", "/oauth2/applications/@me"),
        ("POST", "/channels/77/typing"), ("POST", "/channels/77/typing"),
        ("POST", "/channels/77/messages"),
    ]  # fmt: skip
    body = calls[-1][2]
    assert body["content"] == "echo: what's up?"
    assert body["message_reference"]["message_id"]  # a Discord reply to the question
    (msg,) = agent
    assert (msg.channel, msg.chat_id, msg.user_id) == ("discord", "77", "discord:42")
    assert "ana" in (msg.context or "")


async def test_unmentioned_messages_are_ignored_and_dms_answered(
    fake: FakeDiscord, bot: DiscordChannel, agent: list[Any]
) -> None:
    await fake.post("77", "just chatting", mention=False)
    await fake.post("88", "hello in private", guild_id=None, mention=False)
    calls = await _until_message(fake)
    assert (
        calls[-1][1] == "/channels/88/messages"
        and calls[-1][2]["content"] == "echo: hello in private"
    )
    assert [m.text for m in agent] == ["hello in private"]


async def test_a_reminder_is_delivered_without_a_preceding_message(
    fake: FakeDiscord, bot: DiscordChannel, bus: Bus
) -> None:
    await bus.deliver(Outbound("discord", "555", "⏰ Reminder: call mom"))
    calls = await _until_message(fake)
    assert calls[-1][1:] == ("/channels/555/messages", calls[-1][2])
    assert calls[-1][2]["content"] == "⏰ Reminder: call mom"
    assert "message_reference" not in calls[-1][2]


async def test_after_the_gateway_drops_it_resumes_and_answers_again(
    fake: FakeDiscord, bot: DiscordChannel, agent: list[Any]
) -> None:
    await fake.drop()
    assert await fake.wait_sessions(2) == ["identify", "resume"]
    await fake.post("77", f"<@{BOT_ID}> still there?")
    calls = await _until_message(fake)
    assert calls[-1][2]["content"] == "echo: still there?"
    # A session Discord no longer knows: RESUME refused, so it identifies again.
    fake.invalidate_next_resume = True
    await fake.drop()
    assert await fake.wait_sessions(3) == ["identify", "resume", "identify"]
    await fake.post("77", f"<@!{BOT_ID}> and now?")
    calls = await _until_message(fake)
    assert calls[-1][2]["content"] == "echo: and now?"


def test_long_replies_are_split_under_discords_limit() -> None:
    text = ("word " * 500).strip()
    pieces = split_message(text)
    assert all(len(p) <= 2000 for p in pieces) and " ".join(pieces) == text
    assert split_message("") == [""] and split_message("x" * 4500) == ["x" * 2000] * 2 + ["x" * 500]


async def test_nerve_discord_answers_and_a_reminder_set_there_fires_there(
    fake: FakeDiscord, upstream: FakeUpstream, tmp_path: Path
) -> None:
    """`nerve discord` as a user runs it: the real assistant (model: the fake upstream) calls
    the reminder tool; the scheduler fires the reminder back into the same Discord channel."""
    config = {
        "providers": [{"name": "primary", "protocol": "openai", "api_key": "sk-test",
                       "base_url": upstream.openai_base_url}],
        "routes": [{"name": "default", "model": {"provider": "primary", "model": "m1"}}],
        "probes": {"interval_seconds": 0},
        "admin": {"enabled": False},
        "storage": {"url": "sqlite:///nerve.db"},
        "assistant": {"discord": {"token": "${BOT_TOKEN}", "api_base": fake.api,
                                  "gateway_url": fake.gateway}},
    }  # fmt: skip
    (tmp_path / "nerve.yaml").write_text(yaml.safe_dump(config))
    nerve = str(Path(sys.executable).with_name("nerve"))
    proc = await asyncio.create_subprocess_exec(
        nerve, "discord", "--config", "nerve.yaml", "--log-level", "warning",
        cwd=tmp_path, env={**os.environ, "BOT_TOKEN": "t0ken"},
    )  # fmt: skip
    try:
        await fake.wait_sessions(1, wait_seconds=60)
        when = (datetime.now(UTC) + timedelta(seconds=2)).isoformat(timespec="milliseconds")
        call = {"id": "c1", "type": "function", "function": {"name": "reminder", "arguments":
                json.dumps({"action": "add", "text": "stretch", "at": when})}}  # fmt: skip
        upstream.script(Reply(tool_calls=[call]), Reply(text="Done: I will remind you."))
        await fake.post("77", f"<@{BOT_ID}> remind me to stretch in a second")
        calls = await _until_message(fake)
        assert calls[-1][1] == "/channels/77/messages"
        assert calls[-1][2]["content"] == "Done: I will remind you."
        reminder = await _until_message(fake)
        assert reminder[-1][1] == "/channels/77/messages"
        assert reminder[-1][2]["content"] == "⏰ Reminder: stretch"
    finally:
        proc.send_signal(signal.SIGINT)
        assert await asyncio.wait_for(proc.wait(), 30) == 0


async def test_a_reminder_due_while_the_bot_is_down_waits_and_comes_late_when_it_is_back(
    fake: FakeDiscord,
    bus: Bus,
    storage_url: str,  # noqa: F811 - the fixture
) -> None:
    """The issue: a reminder due while the Discord bot is down is not claimed (nobody could
    show it) nor lost; when the bot is connected again it comes, late, once."""
    clock = ManualClock(START)
    scheduler = Scheduler(job_store_from_url(storage_url), bus_delivery(bus), clock,
                          can_deliver=bus.can_deliver)  # fmt: skip
    await scheduler.open()
    ready = asyncio.Event()
    bus.on_reachable(lambda channel, chat_id: bot.reaches("555") and ready.set())
    bot = DiscordChannel("t0ken", api_base=fake.api, gateway_url=fake.gateway)
    try:
        await bot.start(bus)
        await asyncio.wait_for(ready.wait(), 20)  # READY: the bot is up
        await bot.stop()  # ...and down when the reminder is due
        assert not bus.can_deliver("discord", "555")
        job = await scheduler.add("u1", "discord", "555", "call mom", at=when(60))
        assert await scheduler.tick(START + 60) == 0
        pending = await scheduler.store.get(job["id"])
        assert pending is not None and pending.claimed_by is None

        ready.clear()
        bot = DiscordChannel("t0ken", api_base=fake.api, gateway_url=fake.gateway)
        await bot.start(bus)
        await asyncio.wait_for(ready.wait(), 20)  # back
        assert await scheduler.tick(START + 600) == 1
        calls = await _until_message(fake)
        assert calls[-1][1] == "/channels/555/messages"
        assert calls[-1][2]["content"] == (
            "⏰ Reminder: call mom (late: was due at 2026-05-28T20:27:40+00:00)"
        )
        assert await scheduler.tick(START + 601) == 0 and await scheduler.list("u1") == []
    finally:
        await bot.stop()
        await scheduler.close()


def when(seconds: float) -> datetime:
    return datetime.fromtimestamp(START + seconds, UTC)
