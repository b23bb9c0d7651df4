"""Whose web chat it is: with API keys the socket's key decides (server.api_keys `users`): a
limited key's chat is its first user's, and `?user=` may name only its users; a key without the
limit, and a server without keys (loopback), let `?user=` choose, "web" by default."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import aiohttp
import httpx
import pytest

from nerve.server import build_app
from tests.channels.conftest import reply_of
from tests.conftest import RunningServer, make_config
from tests.fakes.upstream import FakeUpstream, Reply

BOT, FULL = "sk-bot-only-ci-bot", "sk-full-access"


@pytest.fixture
def server(upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch) -> Iterator[RunningServer]:
    monkeypatch.setenv("NERVE_ADMIN_PASSWORD", "channel-tests-password")
    keys = [{"name": "bot", "key": BOT, "users": ["ci-bot", "ci-bot-2"]}, FULL]
    config = make_config({"primary": upstream}, probes={"interval_seconds": 0},
                         server={"api_keys": keys, "config_poll_seconds": 0})  # fmt: skip
    running = RunningServer(build_app(config)).start()
    try:
        yield running
    finally:
        running.stop()


async def chat(server: RunningServer, key: str | None, query: str, text: str) -> dict[str, Any]:
    """Open /chat/ws?<query> with `key` (as the page offers it), send `text`, return the reply."""
    protocols = ("nerve", f"nerve.key.{key}") if key else ("nerve",)
    async with aiohttp.ClientSession() as http, http.ws_connect(
        f"{server.url}/chat/ws?{query}", protocols=protocols
    ) as ws:  # fmt: skip
        assert (await ws.receive_json(timeout=10))["kind"] == "hello"
        await ws.send_json({"text": text})
        assert (await ws.receive_json(timeout=10))["kind"] == "typing"
        return await reply_of(lambda: ws.receive_json(timeout=10))


async def said_by(server: RunningServer, user_id: str, key: str | None = FULL) -> list[str]:
    """What the assistant stored as this user's side of their conversations (turns)."""
    headers = {"authorization": f"Bearer {key}"} if key else {}
    async with httpx.AsyncClient(base_url=server.url, headers=headers, timeout=10) as rest:
        answer = await rest.post("/api/memory/recall", json={"user_id": user_id, "kind": "turn"})
    turns = [r["data"] for r in answer.json()["records"]]
    return [t["content"] for t in turns if t["role"] == "user"]


async def test_a_limited_keys_chat_is_its_first_users(
    server: RunningServer, upstream: FakeUpstream
) -> None:
    upstream.script(Reply(text="Hello, bot."), Reply(text="Hello again."))
    assert (await chat(server, BOT, "chat=t1", "hi from the bot"))["text"] == "Hello, bot."
    assert (await chat(server, BOT, "chat=t2&user=ci-bot-2", "hi again"))["text"] == "Hello again."
    assert await said_by(server, "ci-bot") == ["hi from the bot"]
    assert await said_by(server, "ci-bot-2") == ["hi again"]
    assert await said_by(server, "web") == []


async def test_a_limited_key_naming_another_user_is_refused_before_the_socket_opens(
    server: RunningServer,
) -> None:
    async with aiohttp.ClientSession() as http:
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await http.ws_connect(
                f"{server.url}/chat/ws?chat=t3&user=asha", protocols=("nerve", f"nerve.key.{BOT}")
            )
    assert refused.value.status == 403
    assert await said_by(server, "asha") == []


async def test_a_key_without_a_users_limit_lets_the_page_choose(
    server: RunningServer, upstream: FakeUpstream
) -> None:
    upstream.script(Reply(text="Hi Asha."), Reply(text="Hi web."))
    await chat(server, FULL, "chat=t4&user=asha", "hi as asha")
    await chat(server, FULL, "chat=t5", "hi as nobody in particular")
    assert await said_by(server, "asha") == ["hi as asha"]
    assert await said_by(server, "web") == ["hi as nobody in particular"]


async def test_without_keys_the_page_chooses_as_before(
    upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NERVE_ADMIN_PASSWORD", "channel-tests-password")
    config = make_config({"primary": upstream}, probes={"interval_seconds": 0},
                         server={"config_poll_seconds": 0})  # fmt: skip
    server = RunningServer(build_app(config)).start()
    try:
        upstream.script(Reply(text="Hi Asha."))
        assert (await chat(server, None, "chat=t6&user=asha", "hi, no keys"))["text"] == "Hi Asha."
        assert await said_by(server, "asha", key=None) == ["hi, no keys"]
    finally:
        server.stop()
