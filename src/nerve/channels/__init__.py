"""Channels: the places people talk to the assistant, each behind the `Channel` seam (base.py).

`terminal` (the `nerve chat` REPL), `web` (the page at /chat and its WebSocket), `discord`.
Each publishes `Inbound` messages on the bus and sends the `Outbound` messages routed to it.
"""

from nerve.channels.base import Channel

__all__ = ["Channel"]
