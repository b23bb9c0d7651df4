"""A real tiny agent on loopback: an aiohttp server in its own thread, one behaviour per path.

It is a `Loopback` server (its own thread and event loop), so sync tests (httpx against a
served nerve) and async tests can both use it. Every request is recorded (path and JSON body)
before it is answered, so a test can count calls, including those to a path that never answers.

    POST /echo            200 {"echo": {task, payload}, "agent": name} (?close: no keep-alive)
    POST /fail            500 "boom"
    POST /text            200 text/plain "not json"
    POST /hang            never answers (until the agent stops)
    POST /big             200 JSON of `big_bytes` bytes
    POST /redirect        302 to `redirect_to`
    POST /redirect-here   307 to /echo on the same host
"""

from __future__ import annotations

import socket
from typing import Any

import orjson
from aiohttp import web

from tests.fakes.loopback import Loopback

__all__ = ["FakeAgent", "free_port"]


def free_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class FakeAgent(Loopback):
    handler_cancellation = True  # the /hang handler ends when the caller times out

    def __init__(self, name: str = "fake-agent") -> None:
        super().__init__()
        self.name = name
        self.redirect_to = "http://example.com/"
        self.big_bytes = 4096
        self.requests: list[tuple[str, Any]] = []  # type: ignore[assignment]  # (path, body)

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/{path:.*}", self._handle)

    def hits(self, path: str | None = None) -> int:
        with self._lock:
            return sum(1 for p, _ in self.requests if path is None or p == path)

    def bodies(self, path: str) -> list[Any]:
        with self._lock:
            return [body for p, body in self.requests if p == path]

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError:
            body = None
        with self._lock:
            self.requests.append((request.path, body))
        assert self._closing is not None
        match request.path:
            case "/echo":
                response = web.json_response({"echo": body, "agent": self.name})
                if "close" in request.query:  # no keep-alive: the next call connects anew
                    response.force_close()
                return response
            case "/fail":
                return web.Response(status=500, text="boom")
            case "/text":
                return web.Response(text="not json")
            case "/hang":
                await self._closing.wait()
                return web.Response(status=503)
            case "/big":
                return web.json_response({"blob": "x" * self.big_bytes})
            case "/redirect":
                return web.Response(status=302, headers={"Location": self.redirect_to})
            case "/redirect-here":
                return web.Response(status=307, headers={"Location": "/echo"})
        return web.Response(status=404, text=f"no such path {request.path}")
