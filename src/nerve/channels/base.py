"""The channel seam: where people talk to the assistant (terminal, web page, Discord...).

A channel turns what its users write into `Inbound` messages published on the bus, and sends
the `Outbound` messages the bus routes to it (typing indicators and replies). To add one:
implement these three methods, subscribe to the bus under the channel's name in `start`,
and let `nerve serve` (or a CLI command) start it. The agent never imports a channel.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from nerve.assistant.bus import Bus, Outbound

__all__ = ["Channel"]


class Channel(Protocol):
    name: str

    async def start(self, bus: Bus) -> None:
        """Begin receiving messages (publish them on `bus`) and delivering the bus's replies."""

    async def stop(self) -> None:
        """Stop receiving; safe to call twice."""

    async def send(self, out: Outbound) -> None:
        """Show one reply or typing indicator to the user it is for."""
