"""The message bus between channels and the agent: two message types and asyncio queues.

Channels (terminal, web, Discord) and jobs (reminders, mail) publish `Inbound` messages; the
agent consumes them with `next_inbound` and answers with `Outbound` messages, which `deliver`
routes to the queue of the channel named in the message. A channel reads its queue through
`subscribe(name)`. Messages for a channel that has not subscribed yet wait in its queue.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Bus", "Inbound", "Outbound"]


def _new_id() -> str:
    return uuid.uuid4().hex


@dataclass(frozen=True)
class Inbound:
    """A message for the agent: who wrote what, where (`channel` + `chat_id` name the place)."""

    channel: str
    chat_id: str
    user_id: str
    text: str
    quoted: str | None = None  # the message this one replies to, if the channel knows it
    context: str | None = None  # what the channel knows around it (thread title, server...)
    id: str = field(default_factory=_new_id)
    note: str | None = None  # e.g. "delivered late: nerve was down at 09:00"


@dataclass(frozen=True)
class Outbound:
    """A message from the agent to a channel: a reply, or a typing indicator."""

    channel: str
    chat_id: str
    text: str = ""
    files: tuple[str, ...] = ()
    kind: Literal["message", "typing"] = "message"
    reply_to: str | None = None  # the Inbound.id this answers


class Bus:
    """Asyncio queues: one for the agent, one per channel name."""

    def __init__(self) -> None:
        self._inbound: asyncio.Queue[Inbound] = asyncio.Queue()
        self._outbound: dict[str, asyncio.Queue[Outbound]] = {}

    def _queue(self, channel: str) -> asyncio.Queue[Outbound]:
        queue = self._outbound.get(channel)
        if queue is None:
            queue = self._outbound[channel] = asyncio.Queue()
        return queue

    async def publish(self, msg: Inbound) -> None:
        """To the agent."""
        await self._inbound.put(msg)

    async def next_inbound(self) -> Inbound:
        return await self._inbound.get()

    async def deliver(self, msg: Outbound) -> None:
        """To the channel named in `msg.channel`."""
        await self._queue(msg.channel).put(msg)

    async def subscribe(self, channel: str) -> AsyncIterator[Outbound]:
        """What the agent (or a job) sends to `channel`, forever; one reader per channel."""
        queue = self._queue(channel)
        while True:
            yield await queue.get()
