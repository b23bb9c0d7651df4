"""One MCP server the assistant uses, held open by a supervisor task that reconnects it (AS-5).

`McpConnection(config)` spawns a stdio server (the SDK's `stdio_client`) or connects to a
streamable HTTP one (`streamable_http_client`), initializes a `ClientSession`, lists the tools
and holds the session open in a task of its own (anyio contexts must be left by the task that
entered them). When the connection ends — the process exited, the stream closed, a call found
the transport broken (`mark_dead`) — the session is dropped at once (calls in the outage are
told the server is reconnecting) and the supervisor connects again after a backoff:
`backoff(n)` seconds for the n-th consecutive failure (0 after a connection that worked).

How the end of a stdio server is noticed: the transport's read stream is forwarded through a
stream of our own, and the forwarder sets `dead` when the server's stdout reaches EOF.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

import anyio
import mcp_types
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from nerve.config_sections import McpServerConfig

__all__ = ["McpConnection", "default_backoff"]

log = logging.getLogger("nerve.assistant.mcp")


def default_backoff(failures: int) -> float:
    """0 s after a connection that worked, then 0.5, 1, 2 ... capped at 30 s."""
    return 0.0 if failures == 0 else min(30.0, 0.5 * 2 ** (failures - 1))


def describe(error: BaseException) -> str:
    """A one-line reason, unwrapping the task groups anyio wraps errors in."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


class McpConnection:
    def __init__(
        self,
        config: McpServerConfig,
        *,
        cwd: str | Path | None = None,
        errlog: TextIO | None = None,
        backoff: Callable[[int], float] = default_backoff,
        connect_timeout: float = 30.0,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        self.config = config
        self.on_change = on_change  # called at each state change (connected, tools, down)
        self.cwd = cwd
        self.errlog = errlog
        self.backoff = backoff
        self.connect_timeout = connect_timeout
        self.session: ClientSession | None = None
        self.tools: dict[str, mcp_types.Tool] = {}  # by the server's own tool name
        self.last_error: str | None = None
        self.restarts = 0  # connections made after the first
        self.connections = 0
        self._changed = asyncio.Condition()
        self._stop = asyncio.Event()
        self._dead = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def connected(self) -> bool:
        return self.session is not None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._supervise(), name=f"mcp {self.config.name}")

    async def stop(self, grace: float = 10.0) -> None:
        self._stop.set()
        task, self._task = self._task, None
        if task is None:
            return
        try:
            async with asyncio.timeout(grace):
                await asyncio.shield(task)
        except TimeoutError:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self.session = None

    def mark_dead(self, reason: str) -> None:
        """A call found the transport broken: drop the session now and reconnect."""
        self.last_error = reason
        self.session = None
        self._dead.set()

    async def wait_for(self, predicate: Callable[[McpConnection], bool], wait: float) -> bool:
        """Wait until `predicate(self)` holds (checked at each state change); False on timeout."""
        try:
            async with asyncio.timeout(wait), self._changed:
                await self._changed.wait_for(lambda: predicate(self))
            return True
        except TimeoutError:
            return predicate(self)

    async def _notify(self) -> None:
        if self.on_change is not None:
            self.on_change()
        async with self._changed:
            self._changed.notify_all()

    async def _supervise(self) -> None:
        failures = 0
        while not self._stop.is_set():
            self._dead = asyncio.Event()
            worked = False
            try:
                worked = await self._connect_and_hold()
            except Exception as e:  # a server that fails to start or answer: retried below
                self.last_error = describe(e)
                log.warning("MCP server %s: %s", self.config.name, self.last_error)
            self.session = None
            await self._notify()
            if self._stop.is_set():
                break
            failures = 0 if worked else failures + 1
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.backoff(failures)):
                    await self._stop.wait()
            self.restarts += 1

    async def _connect_and_hold(self) -> bool:
        async with contextlib.AsyncExitStack() as stack:
            read, write = await stack.enter_async_context(self._transport())
            ours_send, ours_read = anyio.create_memory_object_stream[Any](0)
            group = await stack.enter_async_context(anyio.create_task_group())
            stack.callback(group.cancel_scope.cancel)  # runs before the group is left
            group.start_soon(self._forward, read, ours_send)
            session = await stack.enter_async_context(ClientSession(ours_read, write))
            async with asyncio.timeout(self.connect_timeout):
                await session.initialize()
                tools = await _list_tools(session)
            self.tools = {tool.name: tool for tool in tools}
            self.session = session
            self.connections += 1
            self.last_error = None
            await self._notify()
            stop = asyncio.create_task(self._stop.wait())
            dead = asyncio.create_task(self._dead.wait())
            await asyncio.wait({stop, dead}, return_when=asyncio.FIRST_COMPLETED)
            stop.cancel()
            dead.cancel()
            if self._dead.is_set() and not self._stop.is_set():
                self.last_error = self.last_error or "the connection closed"
                log.warning("MCP server %s: %s; reconnecting", self.config.name, self.last_error)
            self.session = None
        return True

    async def _forward(self, read: Any, ours: Any) -> None:
        try:
            async with ours:
                async for item in read:
                    await ours.send(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass
        finally:
            if not self._stop.is_set():
                self.mark_dead(self.last_error or "the server closed the connection")

    def _transport(self) -> contextlib.AbstractAsyncContextManager[Any]:
        config = self.config
        if config.url is not None:
            return streamable_http_client(config.url)
        assert config.command is not None
        params = StdioServerParameters(
            command=config.command, args=config.args, env=config.env or None, cwd=self.cwd
        )
        return stdio_client(params, errlog=self.errlog or sys.stderr)


async def _list_tools(session: ClientSession) -> list[mcp_types.Tool]:
    tools: list[mcp_types.Tool] = []
    cursor: str | None = None
    while True:
        params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        tools += page.tools
        cursor = page.next_cursor
        if not cursor:
            return tools
