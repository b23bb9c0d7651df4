"""Channel fixtures: `nerve serve`'s own app on a real socket: its bus, its assistant serving
it, and the "web" channel feeding the sockets.

    kept(chat_server, chat_id)   what the web chat's outbox keeps for a chat, oldest first
    until(condition, what)       wait for a condition under a deadline (fails naming `what`)
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from nerve.assistant import Assistant, Bus
from nerve.channels.outbox import Kept
from nerve.server import build_app
from nerve.tools import ToolRegistry
from tests.conftest import RunningServer, make_config
from tests.fakes.upstream import FakeUpstream


@dataclass
class ChatServer:
    server: RunningServer
    bus: Bus
    assistant: Assistant
    tools: ToolRegistry

    @property
    def url(self) -> str:
        return self.server.url


@pytest.fixture
def chat_server(upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch) -> Iterator[ChatServer]:
    monkeypatch.setenv("NERVE_ADMIN_PASSWORD", "channel-tests-password")
    config = make_config(
        {"primary": upstream}, probes={"interval_seconds": 0}, server={"config_poll_seconds": 0}
    )
    app = build_app(config)  # serves the "web" channel: bus, agent and sockets wired in
    server = RunningServer(app).start()
    host = app.assistant
    assert host.agent is not None
    try:
        yield ChatServer(server, host.bus, host.agent, host.agent.tools)
    finally:
        server.stop()


def kept(chat_server: ChatServer, chat_id: str) -> list[Kept]:
    outbox = chat_server.server.app.web_chat.outbox
    assert outbox is not None
    return list(chat_server.server.call(outbox.of_chat("web", chat_id)))


def until(condition: Callable[[], bool], what: str, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.02)  # polling a condition, bounded by the deadline


def whole(got: list[dict[str, Any]]) -> dict[str, Any]:
    """The reply at the end of `got` (what a socket received since the typing indicator),
    after checking the deltas before it, if any, add up to it: the web chat streams."""
    *deltas, reply = got
    assert reply["kind"] == "message" and all(d["kind"] == "delta" for d in deltas)
    assert not deltas or "".join(d["text"] for d in deltas) == reply["text"]
    return reply


async def reply_of(receive: Callable[[], Awaitable[Any]]) -> dict[str, Any]:
    """Receive up to and including the next message; see `whole`."""
    got = [await receive()]
    while got[-1]["kind"] == "delta":
        got.append(await receive())
    return whole(got)


def reply_of_sync(receive: Callable[[], Any]) -> dict[str, Any]:
    got = [receive()]
    while got[-1]["kind"] == "delta":
        got.append(receive())
    return whole(got)
