"""The message bus between channels and the agent: two message types and asyncio queues.

Channels (terminal, web, Discord) and jobs (reminders, mail) publish `Inbound` messages; the
agent consumes them with `next_inbound` and answers with `Outbound` messages, which `deliver`
routes to the queue of the channel named in the message. A channel reads its queue through
`subscribe(name)`. Messages for a channel that has not subscribed yet wait in its queue.

Jobs need more than a queue: a reminder may be claimed only by a process that can show it now,
and counts as delivered only once a channel showed it. So a channel also `attach`es itself: a
`reach(chat_id)` test (a web chat socket open here, the Discord bot connected) and a confirmed
`send_now`. `can_deliver` and `deliver_now` ask them; `reachable(channel, chat_id)` tells the
listeners (the scheduler) that a chat just became reachable, so what waits for it goes now.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Bus", "Inbound", "Outbound", "Reach", "SendNow"]

log = logging.getLogger("nerve.bus")


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
    """A message from the agent to a channel: a reply, a typing indicator, or a piece of the
    reply as the model writes it (`delta`: shown by channels that can, dropped by others)."""

    channel: str
    chat_id: str
    text: str = ""
    files: tuple[str, ...] = ()
    kind: Literal["message", "typing", "delta"] = "message"
    reply_to: str | None = None  # the Inbound.id this answers
    # Stable across retries of one delivery (a job's firing, a kept message), so a client that
    # remembers what it showed can skip a repeat; None for replies, which are sent once.
    id: str | None = None


Reach = Callable[[str], bool]  # chat_id → can this channel show a message there right now?
SendNow = Callable[["Outbound"], Awaitable[bool]]  # True once shown; False: not deliverable now


class Bus:
    """Asyncio queues: one for the agent, one per channel name; and the attached channels."""

    def __init__(self) -> None:
        self._inbound: asyncio.Queue[Inbound] = asyncio.Queue()
        self._outbound: dict[str, asyncio.Queue[Outbound]] = {}
        self._attached: dict[str, tuple[Reach, SendNow]] = {}
        self._listeners: list[Callable[[str, str | None], None]] = []

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

    # -- confirmed delivery, for jobs ---------------------------------------------------------

    def attach(self, channel: str, reach: Reach, send_now: SendNow) -> None:
        """`channel` delivers in this process from now on: every chat of it may be reachable."""
        self._attached[channel] = (reach, send_now)
        self.reachable(channel)

    def detach(self, channel: str) -> None:
        self._attached.pop(channel, None)

    def can_deliver(self, channel: str, chat_id: str) -> bool:
        attached = self._attached.get(channel)
        return attached is not None and attached[0](chat_id)

    async def deliver_now(self, msg: Outbound) -> bool:
        """Show `msg` now: True once its channel showed it, False when it cannot here and now
        (not attached in this process, no open socket for the chat, the bot disconnected)."""
        attached = self._attached.get(msg.channel)
        return attached is not None and await attached[1](msg)

    def on_reachable(self, listener: Callable[[str, str | None], None]) -> None:
        """Call `listener(channel, chat_id)` whenever a chat becomes reachable (None: all)."""
        self._listeners.append(listener)

    def reachable(self, channel: str, chat_id: str | None = None) -> None:
        """A channel here can now deliver to `chat_id` (None: to any of its chats)."""
        for listener in list(self._listeners):
            try:
                listener(channel, chat_id)
            except Exception:  # a listener's bug must not stop a channel from connecting
                log.exception("a reachability listener failed")
