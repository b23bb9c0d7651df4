"""The channel seam: where people talk to the assistant (terminal, web page, Discord...).

A channel turns what its users write into `Inbound` messages published on the bus, and sends
the `Outbound` messages the bus routes to it (typing indicators and replies). To add one:
implement these three methods, subscribe to the bus under the channel's name in `start`,
and let `nerve serve` (or a CLI command) start it. The agent never imports a channel.

Jobs deliver only where a channel can show their message now (`Bus.attach`): `BusFed` attaches
itself on `start` with `reaches` (default: any chat) and `send_now` (its `send`, confirmed).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from nerve.assistant.bus import Bus, Outbound

__all__ = ["BusFed", "Channel"]


class Channel(Protocol):
    name: str

    async def start(self, bus: Bus) -> None:
        """Begin receiving messages (publish them on `bus`) and delivering the bus's replies."""

    async def stop(self) -> None:
        """Stop receiving; safe to call twice."""

    async def send(self, out: Outbound) -> None:
        """Show one reply or typing indicator to the user it is for."""


class BusFed:
    """For channels whose `start` only needs to feed `send` from the bus in the background
    (and attach to it, for jobs)."""

    name: str
    bus: Bus | None = None
    _feeding: asyncio.Task[None] | None = None

    async def start(self, bus: Bus) -> None:
        await self._unfeed()
        self.bus = bus
        self._feeding = asyncio.create_task(self._feed(bus), name=f"{self.name} channel")
        bus.attach(self.name, self.reaches, self.send_now)

    async def _feed(self, bus: Bus) -> None:
        async for out in bus.subscribe(self.name):
            await self.send(out)

    async def stop(self) -> None:
        await self._unfeed()

    async def _unfeed(self) -> None:
        if self.bus is not None:
            self.bus.detach(self.name)
        task, self._feeding = self._feeding, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def send(self, out: Outbound) -> None:
        raise NotImplementedError

    def reaches(self, chat_id: str) -> bool:
        """Whether a message for `chat_id` can be shown now (default: yes, any chat)."""
        return True

    async def send_now(self, out: Outbound) -> bool:
        """`send`, confirmed: True once shown, False when `out.chat_id` is not reachable now."""
        if not self.reaches(out.chat_id):
            return False
        await self.send(out)
        return True
