"""Channel fixtures: `nerve serve`'s own app on a real socket: its bus, its assistant serving
it, and the "web" channel feeding the sockets.

    kept(chat_server, chat_id)   what the web chat's outbox keeps for a chat, oldest first
    until(condition, what)       wait for a condition under a deadline (fails naming `what`)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

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
