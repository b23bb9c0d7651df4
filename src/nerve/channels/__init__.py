"""Channels: the places people talk to the assistant, each behind the `Channel` seam (base.py).

`terminal` (the `nerve chat` REPL), `web` (the page at /chat and its WebSocket; the channel in
`web_channel`, and `outbox`: what is kept for chats with no tab open), `discord`. Each publishes
`Inbound` messages on the bus, sends the `Outbound` messages routed to it, and attaches to the
bus so jobs reach only chats it can show them in now.
"""

from nerve.channels.base import Channel

__all__ = ["Channel"]
