"""The "web" channel: the web chat's open sockets by chat id, fed from the bus, and its outbox.

A socket lives in one process, so what the bus brings for a chat with no socket open here (a
reply that finished after the tab closed, a mail summary) is kept in the store's outbox
(`nerve.channels.outbox`) instead of lost. Whichever process the chat connects to next shows
it: on connect (`connected`), and every `poll_seconds` for the chats open here, since another
replica may have kept something while the tab was open on this one. Kept messages carry
`queued_at` (epoch seconds) and a stable `id`.

Reminders are not kept here: the scheduler claims a web reminder only where `reaches(chat_id)`
(a socket of that chat open in this process) and shows it with `send_now`, which says whether
it was sent; otherwise the job stays pending in the store until the chat connects somewhere,
and `connected` wakes the scheduler (`Bus.reachable`) so it comes at once, marked late.

A chat id `user:<id>` (`for_user`) names every tab of a user rather than one: a reminder set
where no tab was (`nerve chat --once`) is shown in whichever tab of that user is open, on
whichever replica, and waits pending until one connects.

Sent means handed to an open socket: a tab that vanished without closing its socket (a laptop
asleep) may lose what was sent to it before the server notices.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from starlette.websockets import WebSocket

from nerve.assistant import Bus, Outbound
from nerve.channels.base import BusFed
from nerve.channels.outbox import Outbox

__all__ = ["USER_CHAT", "WebChat", "for_user"]

USER_CHAT = "user:"  # a chat id naming every tab of a user


def for_user(user_id: str) -> str:
    """The web chat id that reaches every tab of `user_id`."""
    return USER_CHAT + user_id


log = logging.getLogger("nerve.channels.web")
_BATCH = 100  # kept messages claimed at a time


def _payload(out: Outbound) -> dict[str, Any]:
    body = asdict(out)
    body["files"] = list(out.files)
    return body


class WebChat(BusFed):
    name = "web"

    def __init__(
        self,
        outbox: Outbox | None = None,
        *,
        poll_seconds: float = 15,
        lease_seconds: float = 300,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """`outbox` None: nothing is kept (a message for a closed tab is logged and dropped)."""
        self.sockets: dict[str, set[WebSocket]] = {}
        self.users: dict[str, set[str]] = {}  # user id -> the chat ids of their tabs open here
        self.outbox = outbox
        self.poll = poll_seconds
        self.lease = lease_seconds  # a claimed kept message not sent by then is claimable again
        self.clock = clock
        self.owner = uuid.uuid4().hex  # this process, in outbox claims
        self._polling: asyncio.Task[None] | None = None

    async def start(self, bus: Bus) -> None:
        if self.outbox is not None:
            await self.outbox.open()  # a no-op when open
        await super().start(bus)
        if self.outbox is not None and self._polling is None:
            self._polling = asyncio.create_task(self._poll(), name="web chat outbox")

    async def stop(self) -> None:
        polling, self._polling = self._polling, None
        if polling is not None:
            polling.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await polling
        await super().stop()
        if self.outbox is not None:
            await self.outbox.close()

    # -- sockets -------------------------------------------------------------------------------

    async def connected(self, chat_id: str, ws: WebSocket, user_id: str | None = None) -> None:
        """A socket of `chat_id` (a tab of `user_id`) opened here: what was kept for the chat
        comes now, and the scheduler hears the chat, and the user, are reachable (their due
        reminders come next)."""
        self.sockets.setdefault(chat_id, set()).add(ws)
        if user_id is not None:
            self.users.setdefault(user_id, set()).add(chat_id)
        await self._drain([chat_id, *([for_user(user_id)] if user_id is not None else [])])
        if self.bus is not None:
            self.bus.reachable(self.name, chat_id)
            if user_id is not None:
                self.bus.reachable(self.name, for_user(user_id))

    def disconnected(self, chat_id: str, ws: WebSocket, user_id: str | None = None) -> None:
        sockets = self.sockets.get(chat_id)
        if sockets is not None:
            sockets.discard(ws)
            if not sockets:
                del self.sockets[chat_id]
        chats = self.users.get(user_id or "")
        if user_id is not None and chats is not None and chat_id not in self.sockets:
            chats.discard(chat_id)
            if not chats:
                del self.users[user_id]

    def _chats(self, chat_id: str) -> list[str]:
        """The chats of this process a chat id names: itself, or a user's open tabs."""
        if chat_id.startswith(USER_CHAT):
            return sorted(self.users.get(chat_id.removeprefix(USER_CHAT), ()))
        return [chat_id]

    def reaches(self, chat_id: str) -> bool:
        return any(self.sockets.get(c) for c in self._chats(chat_id))

    async def _to_sockets(self, chat_id: str, body: dict[str, Any]) -> bool:
        """Send to every socket of the chat here; whether any took it."""
        sent = False
        for ws in [w for c in self._chats(chat_id) for w in self.sockets.get(c, ())]:
            try:
                await ws.send_json(body)
                sent = True
            except Exception:  # a socket closing under us: it unregisters itself
                log.debug("web chat: a socket of %s went away", chat_id)
        return sent

    # -- delivery ------------------------------------------------------------------------------

    async def send_now(self, out: Outbound) -> bool:
        return await self._to_sockets(out.chat_id, _payload(out))

    async def send(self, out: Outbound) -> None:
        body = _payload(out)
        if await self._to_sockets(out.chat_id, body) or out.kind != "message":
            return  # a typing indicator for a closed tab means nothing later
        if self.outbox is None:
            log.warning("web chat %s: no socket open and no outbox; a message is lost", out.chat_id)
            return
        try:
            await self.outbox.put(self.name, out.chat_id, body, self.clock())
        except Exception:
            log.exception("web chat %s: no socket open and the outbox failed; a message is lost",
                          out.chat_id)  # fmt: skip
            return
        log.info("web chat %s: no socket open here; a message is kept until it connects",
                 out.chat_id)  # fmt: skip

    async def _drain(self, chat_ids: list[str]) -> None:
        """Show what is kept for these chats (open here), oldest first, each once."""
        while self.outbox is not None and chat_ids:
            now = self.clock()
            try:
                entries = await self.outbox.claim(
                    self.name, chat_ids, self.owner, now, now + self.lease, _BATCH
                )
                for entry in entries:
                    body = {**entry.body, "queued_at": entry.created_at}
                    body["id"] = body.get("id") or f"kept-{entry.id}"
                    if await self._to_sockets(entry.chat_id, body):
                        await self.outbox.done(entry.id, self.owner)
                    else:  # the socket went away: for the next connection
                        await self.outbox.release(entry.id, self.owner)
            except Exception:
                log.exception("web chat: reading the outbox failed; retried on the next poll")
                return
            if len(entries) < _BATCH:
                return

    async def _poll(self) -> None:
        """Kept messages for chats open here that another replica stored meanwhile."""
        while True:
            await asyncio.sleep(self.poll)  # the poll interval, not a timing assumption
            if self.sockets:
                await self._drain([*self.sockets, *(for_user(u) for u in self.users)])
