"""`/mcp` in `nerve serve`: MCP over streamable HTTP, in the same process as the REST API.

`McpHttp` is an ASGI endpoint the server dispatches `/mcp` and `/mcp/` to (before the
framework, so neither path is redirected). Each request is checked first:

- with API keys, the server's boundary (nerve.access) has checked the key already;
- without keys (nerve then listens on loopback only): DNS-rebinding protection, so a web page
  cannot reach the server through a hostname it controls. Host must be a loopback name (with
  or without a port) and Origin, when sent, a loopback origin; else 421 / 403.

then, for a POST, its body is read (up to `max_body_bytes`, else 413) and checked to be one
JSON-RPC message (nerve.mcp.envelope): one that is not is answered here, HTTP 400 with a
JSON-RPC error (-32700, -32600; -32602 for array params), as the SDK would take a request
with a bad id for a notification and drop it. The rest goes, its body replayed, to the SDK's
session manager, stateless with JSON answers: no session lives in one process, so any worker
or replica answers any request (the tools never call the client back), and a call costs
~0.5 ms less than with SSE sessions (bench/mcp_latency.py). `running()` starts a fresh manager
each time (the SDK's can run once), in a task of its own, for as long as the server's
lifespan lasts.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from mcp.server import MCPServer
from mcp.server.streamable_http_manager import (
    RequestBodyLimitMiddleware,
    StreamableHTTPSessionManager,
)
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from nerve.mcp.envelope import rejection

__all__ = ["MCP_PATHS", "McpHttp"]

MCP_PATHS = frozenset({"/mcp", "/mcp/"})
_LOOPBACK = ("127.0.0.1", "localhost", "[::1]")
_LOOPBACK_ONLY = TransportSecuritySettings(
    enable_dns_rebinding_protection=True,
    allowed_hosts=[*_LOOPBACK, *(f"{h}:*" for h in _LOOPBACK)],
    allowed_origins=[f"{scheme}://{h}{port}" for scheme in ("http", "https")
                     for h in _LOOPBACK for port in ("", ":*")],
)  # fmt: skip


class McpHttp:
    def __init__(
        self, server: MCPServer[Any], *, keys_active: Callable[[], bool], max_body_bytes: int
    ) -> None:
        self.server = server
        self.keys_active = keys_active  # asked per request: keys come and go
        self.max_body_bytes = max_body_bytes
        self.rebinding_guard = TransportSecurityMiddleware(_LOOPBACK_ONLY)
        self._checked = RequestBodyLimitMiddleware(self._check_envelope, max_body_bytes)
        self._sessions: StreamableHTTPSessionManager | None = None

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        # The SDK checks Content-Type itself; Host/Origin and keys are checked in __call__.
        self.server.streamable_http_app(
            streamable_http_path="/mcp",
            stateless_http=True,  # any replica or worker can answer any request
            json_response=True,  # a tool call is one JSON answer: nothing to stream
            max_request_body_size=self.max_body_bytes,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        sessions = self.server.session_manager
        started, stop = asyncio.Event(), asyncio.Event()

        async def hold() -> None:
            # The manager's task group must be left by the task that entered it; a lifespan's
            # start and end may run in different tasks (test fixtures do), so it gets its own.
            async with sessions.run():
                self._sessions = sessions
                started.set()
                try:
                    await stop.wait()
                finally:
                    self._sessions = None

        task = asyncio.create_task(hold(), name="mcp sessions")
        waiting = asyncio.create_task(started.wait())
        await asyncio.wait({task, waiting}, return_when=asyncio.FIRST_COMPLETED)
        waiting.cancel()
        if task.done():
            task.result()  # it failed to start: raise why
        try:
            yield
        finally:
            stop.set()
            await task

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if not self.keys_active():
            refused = await self.rebinding_guard.validate_request(Request(scope))
            if refused is not None:
                await refused(scope, receive, send)
                return
        if self._sessions is None:
            raise RuntimeError("/mcp is not running: the server's lifespan did not start it")
        if scope["method"] == "POST":
            await self._checked(scope, receive, send)
        else:
            await self._sessions.handle_request(scope, receive, send)

    async def _check_envelope(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            body = await Request(scope, receive).body()
        except ClientDisconnect:
            return  # nobody to answer
        refused = rejection(body)
        if refused is not None:
            answer = Response(refused.body(), status_code=400, media_type="application/json")
            await answer(scope, receive, send)
            return
        if self._sessions is None:  # the server stopped while the body arrived
            raise RuntimeError("/mcp is not running: the server's lifespan ended")
        await self._sessions.handle_request(scope, _replaying(body, receive), send)


def _replaying(body: bytes, receive: Receive) -> Receive:
    """`receive` for the SDK: the body already read, then the client's own (a disconnect)."""
    pending: list[Message] = [{"type": "http.request", "body": body, "more_body": False}]

    async def replay() -> Message:
        return pending.pop() if pending else await receive()

    return replay
