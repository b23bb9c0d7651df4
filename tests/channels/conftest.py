"""Channel fixtures: `nerve serve`'s own app on a real socket: its bus, its assistant serving
it, and the "web" channel feeding the sockets."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from nerve.assistant import Assistant, Bus
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
