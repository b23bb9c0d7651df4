"""A small aiohttp app served on 127.0.0.1:<free port> from a background thread.

The base of the fake web APIs (Brave Search, OpenWeatherMap, and `FakeUpstream`, the fake LLM
provider): usable from sync tests (the CLI) and async ones alike. Subclasses add routes in
`routes(app)`, which runs on the server's loop; `seen` records a request (method, path, query,
headers) for assertions.

    with FakeBrave(key="k") as brave:
        ...  # point assistant.web_search.base_url at brave.url
        assert brave.requests[0].query["q"] == "nerve"
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from types import TracebackType
from typing import Self

from aiohttp import web

__all__ = ["Loopback", "Seen"]


@dataclass(frozen=True)
class Seen:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]


class Loopback:
    name = "loopback"
    handler_cancellation = False  # True: a client that gives up frees its (hanging) handler

    def __init__(self) -> None:
        self.url = ""
        self.requests: list[Seen] = []
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closing: asyncio.Event | None = None
        self._failure: BaseException | None = None

    def routes(self, app: web.Application) -> None:
        raise NotImplementedError

    def seen(self, request: web.Request) -> None:
        with self._lock:
            self.requests.append(
                Seen(request.method, request.path, dict(request.query), dict(request.headers))
            )

    def start(self) -> Self:
        if self._thread is not None:
            raise RuntimeError(f"fake {self.name!r} is already running")
        ready = threading.Event()
        self._thread = threading.Thread(
            target=asyncio.run, args=(self._serve(ready),), name=f"fake-{self.name}"
        )
        self._thread.start()
        ready.wait()
        if self._failure is not None:
            self._thread.join()
            self._thread = None
            raise RuntimeError(f"fake {self.name!r} failed to start") from self._failure
        return self

    def stop(self) -> None:
        """Stop serving; handlers still waiting end by dropping their connections."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        assert self._loop is not None and self._closing is not None
        self._loop.call_soon_threadsafe(self._closing.set)
        thread.join()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, _t: type[BaseException] | None, _e: BaseException | None, _tb: TracebackType | None
    ) -> None:
        self.stop()

    async def _serve(self, ready: threading.Event) -> None:
        self._loop = asyncio.get_running_loop()
        self._closing = asyncio.Event()
        app = web.Application()
        self.routes(app)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0,
                               handler_cancellation=self.handler_cancellation)  # fmt: skip
        try:
            await runner.setup()
            await web.TCPSite(runner, "127.0.0.1", 0).start()
            self.url = f"http://127.0.0.1:{runner.addresses[0][1]}"
        except BaseException as exc:
            self._failure = exc
            await runner.cleanup()
            return
        finally:
            ready.set()
        try:
            await self._closing.wait()
        finally:
            await runner.cleanup()
