"""Shared fixtures: a fake upstream on loopback and a real nerve server on a real socket."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest
import uvicorn
import yaml

from nerve.config import Config, parse_config
from nerve.gateway.resilience import ManualClock
from nerve.server import NerveApp, build_app
from nerve.serving import protocol_for
from tests.fakes.upstream import FakeUpstream
from tests.processes import Replica


@pytest.fixture(autouse=True)
def _in_a_fresh_directory(tmp_path, monkeypatch):
    """Relative default paths (.nerve/ data, the memory WAL) land in a fresh directory."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture
async def closing() -> AsyncIterator[AsyncExitStack]:
    """What a test's factories made, closed at its teardown, last first:
    `closing.push_async_callback(store.close)`."""
    async with AsyncExitStack() as stack:
        yield stack


@pytest.fixture
def upstream() -> Iterator[FakeUpstream]:
    with FakeUpstream(name="primary") as fake:
        yield fake


@pytest.fixture
def upstream2() -> Iterator[FakeUpstream]:
    with FakeUpstream(name="secondary") as fake:
        yield fake


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


class RunningServer:
    """A nerve app served by uvicorn in a thread, on a socket that listens before it starts."""

    def __init__(self, app: NerveApp) -> None:
        self.app = app
        # IPPROTO_TCP: asyncio sets TCP_NODELAY only then (else ~40 ms per answer, Nagle).
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            app, log_level="warning", access_log=False, lifespan="on",
            http=protocol_for(app.config.limits),  # the protocol `nerve serve` runs
        )  # fmt: skip
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self._loop_ready = threading.Event()

    def _run(self) -> None:
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        self.loop = asyncio.get_running_loop()
        self._loop_ready.set()
        await self.server.serve(sockets=[self.sock])

    def call(self, coroutine: Any, timeout: float = 10) -> Any:
        """Run a coroutine on the server's event loop (where its objects live); its result."""
        assert self._loop_ready.wait(timeout), "the server's event loop did not start"
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def start(self, timeout: float = 15) -> RunningServer:
        """Start serving; return once the app's lifespan has started (or fail loudly)."""
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the server did not start; see the log above")
            time.sleep(0.005)  # polling a flag uvicorn sets, not a timing assumption
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()
        assert not self.thread.is_alive(), "the server did not stop"


def make_config(
    upstreams: dict[str, FakeUpstream], routes: list[dict[str, Any]] | None = None, **extra: Any
) -> Config:
    """A config with one provider per fake upstream (name → fake) and the given routes."""
    providers = []
    for name, fake in upstreams.items():
        if name.startswith("anthropic"):
            providers.append(
                {
                    "name": name,
                    "protocol": "anthropic",
                    "base_url": fake.anthropic_base_url,
                    "api_key": "sk-ant-test",
                }
            )
        else:
            providers.append(
                {
                    "name": name,
                    "protocol": "openai",
                    "base_url": fake.openai_base_url,
                    "api_key": f"sk-{name}",
                }
            )
    first = next(iter(upstreams))
    routes = routes or [{"name": "default", "model": {"provider": first, "model": "m1"}}]
    return parse_config({"providers": providers, "routes": routes, **extra}, environ={})


@pytest.fixture
def serve(clock: ManualClock) -> Iterator[Callable[[Config], RunningServer]]:
    servers: list[RunningServer] = []

    def start(config: Config) -> RunningServer:
        server = RunningServer(build_app(config, clock=clock)).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[Callable[..., list[Replica]]]:
    """spawn(config, count=1, workers=1) → `count` real `nerve serve` processes on one config
    file, each in a working directory of its own (r0, r1, ...), ready; all stopped at teardown."""
    started: list[Replica] = []

    def start(config: dict[str, Any], count: int = 1, workers: int = 1) -> list[Replica]:
        path = tmp_path / "nerve.yaml"
        path.write_text(yaml.safe_dump(config))
        new = [Replica(path, tmp_path / f"r{len(started) + i}", workers) for i in range(count)]
        started.extend(new)
        for replica in new:
            replica.wait_ready()
        return new

    yield start
    for replica in started:
        replica.stop()
