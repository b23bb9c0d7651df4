"""AS-5 over HTTP: `nerve serve` goes away mid-session → the call is an error saying the server
is reconnecting; a server back on the same address is reconnected and answers again."""

from __future__ import annotations

import socket

from nerve.config_sections import McpServerConfig
from nerve.gateway.resilience import ManualClock
from nerve.mcp.client import McpClients
from nerve.server import NerveApp, build_app
from tests.conftest import RunningServer, make_config
from tests.fakes.upstream import FakeUpstream


class ServerAt(RunningServer):
    """RunningServer on a given port (to come back where the client expects it)."""

    def __init__(self, app: NerveApp, port: int = 0) -> None:
        super().__init__(app)
        self.sock.close()
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", port))
        self.sock.listen(128)
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"


async def test_an_http_server_that_goes_away_is_reconnected_when_back(
    upstream: FakeUpstream, clock: ManualClock
) -> None:
    config = make_config({"primary": upstream})
    first = ServerAt(build_app(config, clock=clock)).start()
    port = first.port
    clients = McpClients([McpServerConfig(name="web", url=f"{first.url}/mcp")])
    await clients.start(wait=30)
    second = None
    try:
        assert (await clients.call("web", "check_safety", {"kind": "shell", "content": "ls"})).ok
        first.stop()
        down = await clients.call("web", "check_safety", {"kind": "shell", "content": "ls"})
        assert not down.ok and "reconnecting" in str(down.error), down.error

        second = ServerAt(build_app(config, clock=clock), port).start()
        assert await clients.ready("web", wait=30), clients.status()
        back = await clients.call("web", "check_safety", {"kind": "shell", "content": "ls"})
        assert back.ok, back.error
        assert clients.status()["web"]["restarts"] >= 1
    finally:
        await clients.stop()
        if second is not None:
            second.stop()
