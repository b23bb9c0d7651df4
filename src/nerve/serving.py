"""The HTTP protocol `nerve serve` runs: uvicorn's httptools protocol, guarded against slow and
greedy clients (issue 13, OWASP API4).

uvicorn gives a connection all the time it wants until its headers are complete (its keep-alive
timer runs only between requests), so a client that connects and trickles headers holds a
connection and a file descriptor forever. `GuardedHttp` closes a connection whose request line
and headers are not complete within `limits.header_timeout_seconds` (from connecting, and from
the first byte of each later request), and refuses connections past
`limits.max_connections_per_client` open ones from one address. Slow bodies are the app's to
time out (`limits.body_timeout_seconds`, a 408), and the rate limiter's slots are taken only
after the body is read, so clients that go quiet starve nobody.

`protocol_for(limits)` is a subclass with its own settings and counts (one per server: tests
run several in one process); `nerve serve --workers N` names `nerve.serving:GuardedHttp` by
import string and each worker sets it up from its config (`configure`).
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from typing import TYPE_CHECKING, Any, ClassVar

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

if TYPE_CHECKING:
    from nerve.config import LimitsConfig

__all__ = ["GuardedHttp", "configure", "protocol_for"]

log = logging.getLogger("nerve.server")


class GuardedHttp(HttpToolsProtocol):
    header_seconds: ClassVar[float] = 10.0
    max_per_client: ClassVar[int] = 64
    open_by_client: ClassVar[Counter[str]] = Counter()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._peer: str | None = None  # counted in open_by_client while set
        self._header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        peer = self.client[0] if self.client else "unknown"
        if self.open_by_client[peer] >= self.max_per_client:
            log.warning("refused a connection from %s: %d open already (limits."
                        "max_connections_per_client)", peer, self.max_per_client)  # fmt: skip
            transport.close()
            return
        self.open_by_client[peer] += 1
        self._peer = peer
        self._arm()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._header_timer is None:
            self._arm()

    def on_headers_complete(self) -> None:
        self._disarm()
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._peer is not None:
            self.open_by_client[self._peer] -= 1
            if self.open_by_client[self._peer] <= 0:
                del self.open_by_client[self._peer]
            self._peer = None
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._header_timer = self.loop.call_later(self.header_seconds, self._too_slow)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _too_slow(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            log.info("closed a connection from %s: no complete headers within %.0f s",
                     self._peer, self.header_seconds)  # fmt: skip
            self.transport.close()


def configure(protocol: type[GuardedHttp], limits: LimitsConfig) -> None:
    protocol.header_seconds = limits.header_timeout_seconds
    protocol.max_per_client = limits.max_connections_per_client


def protocol_for(limits: LimitsConfig) -> type[GuardedHttp]:
    """A `GuardedHttp` of its own (settings and counts) for one server."""
    protocol = type("GuardedHttp", (GuardedHttp,), {"open_by_client": Counter()})
    configure(protocol, limits)
    return protocol
