"""A small TCP load balancer on loopback, health-checked on `/ready`, that remembers what it did.

What haproxy does in `deploy/haproxy.cfg`, small enough to read: every new client connection
goes to the next backend in rotation (round-robin); a backend is in rotation only while its last
`GET /ready` answered 200 (checked every `interval` seconds), and it leaves at once when it
refuses a connection (the connection then goes to the next one: nothing was sent, so retrying
is safe). Bytes are piped both ways untouched, so HTTP, streams and WebSockets all pass; one
request per connection (clients that close after each answer) spreads requests, not
connections.

For the tests' checks it records every `Forward` (which backend, in which of its turns in
rotation, the status line of the answer or that none came) and every `Transition` of a
backend in or out of rotation.

    balancer = await Balancer([("127.0.0.1", 8081), ("127.0.0.1", 8082)]).start()
    ...  # clients use balancer.url
    async with asyncio.timeout(30):
        await balancer.wait_for(lambda: balancer.up[backend])   # in rotation again
    await balancer.stop()
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Self

__all__ = ["Backend", "Balancer", "Forward", "Transition"]

Backend = tuple[str, int]
_PIPE_CHUNK = 65536


@dataclass
class Transition:
    at: float  # time.monotonic()
    backend: Backend
    up: bool
    why: str  # "ready", "503 ...", "refused", "no answer"


@dataclass
class Forward:
    """One client connection and what became of it."""

    backend: Backend
    turn: int  # the backend's turn in rotation when it was chosen (counts up from 1)
    opened_at: float
    status: int | None = None  # of the answer's status line; None: no answer came
    closed_at: float | None = None
    cut: bool = False  # the backend reset or closed before a whole status line
    sent: int = 0  # bytes of the client's request passed on


@dataclass
class _State:
    up: bool = False
    turn: int = 0  # how many times it came into rotation
    last: str = ""


class Balancer:
    def __init__(
        self,
        backends: list[Backend],
        *,
        check_path: str = "/ready",
        interval: float = 0.05,
        timeout: float = 1.0,
    ) -> None:
        self.backends = list(backends)
        self.check_path = check_path
        self.interval = interval
        self.timeout = timeout
        self.url = ""
        self.forwards: list[Forward] = []
        self.transitions: list[Transition] = []
        self.refused = 0  # client connections turned away: no backend in rotation
        self._state = {b: _State() for b in self.backends}
        self._next = itertools.count()
        self._server: asyncio.Server | None = None
        self._checking: list[asyncio.Task[None]] = []
        self._tasks: set[asyncio.Task[None]] = set()  # connections being served
        self._open: set[asyncio.StreamWriter] = set()  # their sockets, both sides
        self._changed = asyncio.Condition()

    @property
    def up(self) -> dict[Backend, bool]:
        return {b: s.up for b, s in self._state.items()}

    def turn(self, backend: Backend) -> int:
        return self._state[backend].turn

    async def start(self) -> Self:
        self._server = await asyncio.start_server(self._client, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        loop = asyncio.get_running_loop()
        self._checking = [loop.create_task(self._check_loop(b)) for b in self.backends]
        return self

    async def stop(self) -> None:
        """Stop listening and checking; connections still open are closed (not cancelled:
        asyncio's streams log a cancelled connection handler as an error)."""
        if self._server is not None:
            self._server.close()
        for task in self._checking:
            task.cancel()
        for writer in list(self._open):
            writer.close()
        await asyncio.gather(*self._checking, *self._tasks, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()

    async def wait_for(self, condition: Callable[[], bool]) -> None:
        """Until `condition()` holds after a health check or a connection; callers bound it
        (`async with asyncio.timeout(...)`)."""
        async with self._changed:
            await self._changed.wait_for(condition)

    # --- rotation ---------------------------------------------------------------------------

    async def _set(self, backend: Backend, up: bool, why: str) -> None:
        state = self._state[backend]
        state.last = why
        if up != state.up:
            state.up = up
            state.turn += up
            self.transitions.append(Transition(time.monotonic(), backend, up, why))
        async with self._changed:
            self._changed.notify_all()

    async def _check_loop(self, backend: Backend) -> None:
        while True:
            up, why = await self._check(backend)
            await self._set(backend, up, why)
            await asyncio.sleep(self.interval)  # the check period, as haproxy's `inter`

    async def _check(self, backend: Backend) -> tuple[bool, str]:
        host, port = backend
        request = (
            f"GET {self.check_path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n"
        )
        try:
            async with asyncio.timeout(self.timeout):
                reader, writer = await asyncio.open_connection(host, port)
                try:
                    writer.write(request.encode())
                    line = await reader.readline()
                finally:
                    writer.close()
                    with contextlib.suppress(OSError):
                        await writer.wait_closed()
        except (OSError, TimeoutError) as e:
            return False, "refused" if isinstance(e, ConnectionRefusedError) else "no answer"
        status = _status(line)
        return status == 200, "ready" if status == 200 else line.decode("latin-1").strip()

    def _rotation(self) -> list[Backend]:
        """The backends in rotation, starting with the next one's turn."""
        start = next(self._next)
        ordered = [
            self.backends[(start + i) % len(self.backends)] for i in range(len(self.backends))
        ]
        return [b for b in ordered if self._state[b].up]

    # --- forwarding -------------------------------------------------------------------------

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:  # stop() waits for connections still open, once it closed them
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        self._open.add(writer)
        try:
            for backend in self._rotation():
                try:
                    up_reader, up_writer = await asyncio.open_connection(*backend)
                except OSError:
                    await self._set(backend, False, "refused")
                    continue
                forward = Forward(backend, self._state[backend].turn, time.monotonic())
                self.forwards.append(forward)
                self._open.add(up_writer)
                try:
                    await self._pipe(reader, writer, up_reader, up_writer, forward)
                finally:
                    self._open.discard(up_writer)
                return
            self.refused += 1
        finally:
            self._open.discard(writer)
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    async def _pipe(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        up_reader: asyncio.StreamReader,
        up_writer: asyncio.StreamWriter,
        forward: Forward,
    ) -> None:
        async def upstream() -> None:  # client → backend; the client's EOF is passed on
            with contextlib.suppress(OSError):
                while chunk := await reader.read(_PIPE_CHUNK):
                    forward.sent += len(chunk)
                    up_writer.write(chunk)
                    await up_writer.drain()
                if up_writer.can_write_eof():
                    up_writer.write_eof()

        async def downstream() -> None:  # backend → client, reading the status line on the way
            head = b""
            try:
                while chunk := await up_reader.read(_PIPE_CHUNK):
                    if forward.status is None:
                        head += chunk
                        if b"\r\n" in head:
                            forward.status = _status(head)
                    writer.write(chunk)
                    await writer.drain()
            except OSError:
                pass
            forward.cut = forward.status is None
            async with self._changed:
                self._changed.notify_all()

        sending = asyncio.create_task(upstream())
        try:
            await downstream()  # the answer is over when the backend closes (or dies)
        finally:
            sending.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sending
            forward.closed_at = time.monotonic()
            up_writer.close()
            with contextlib.suppress(OSError):
                await up_writer.wait_closed()


def _status(head: bytes) -> int | None:
    """The status of an HTTP/1.x status line (`HTTP/1.1 200 OK`), or None."""
    parts = head.split(b"\r\n", 1)[0].split(b" ", 2)
    if len(parts) >= 2 and parts[0].startswith(b"HTTP/") and parts[1].isdigit():
        return int(parts[1])
    return None
