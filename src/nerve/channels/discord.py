"""The Discord channel: the assistant as a bot that answers when mentioned, and in DMs.

A message that mentions the bot (or any DM, unless `dms` is off) becomes an `Inbound` on the
bus (the mention stripped, the replied-to message as `quoted`), with a typing indicator shown at
once. The channel reads the bus's "discord" queue and sends each `Outbound` to the Discord
channel named by its `chat_id`: replies (as Discord replies when `reply_to` names the message),
typing indicators, and messages nobody asked for just now (reminders, mail summaries).

discord.py keeps the gateway connection: it heartbeats, RESUMEs after a drop and identifies
again when the session is gone, so a bot that looks online keeps receiving. The channel is
attached to the bus for jobs: it `reaches` every chat while the gateway is connected, so a
reminder due while the bot is down stays pending, and READY/RESUMED tell the bus it is back.
Only unprivileged intents are requested: Discord sends the text of messages that mention the
bot and of DMs without the Message Content intent. `api_base` / `gateway_url` point discord.py
elsewhere (a fake in tests); they are process-wide settings of discord.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

import aiohttp
import discord
import yarl

from nerve.assistant.bus import Bus, Inbound, Outbound

__all__ = ["DiscordChannel", "split_message"]

log = logging.getLogger("nerve.channels.discord")

MAX_LEN = 2000  # Discord's limit on one message's text
_REMEMBERED = 1000  # inbound messages kept to answer as Discord replies


def split_message(text: str, limit: int = MAX_LEN) -> list[str]:
    """Pieces of at most `limit` characters, cut at a line break or space when there is one."""
    pieces: list[str] = []
    while len(text) > limit:
        cut = max(text.rfind("\n", 0, limit), text.rfind(" ", 0, limit))
        cut = cut if cut > limit // 2 else limit
        pieces.append(text[:cut])
        text = text[cut:].lstrip("\n ")
    return [*pieces, text] if text or not pieces else pieces


class DiscordChannel:
    name = "discord"

    def __init__(
        self,
        token: str,
        *,
        dms: bool = True,
        channels: Iterable[str] = (),
        api_base: str | None = None,
        gateway_url: str | None = None,
    ) -> None:
        if not token:
            raise ValueError("assistant.discord.token is empty: set DISCORD_TOKEN")
        self.token = token
        self.dms = dms
        self.channels = {str(c) for c in channels}
        self.api_base = api_base
        self.gateway_url = gateway_url
        self.client: discord.Client | None = None
        self._bus: Bus | None = None
        self._tasks: list[asyncio.Task[Any]] = []
        self._asked: OrderedDict[str, discord.Message] = OrderedDict()

    async def start(self, bus: Bus) -> None:
        """Log in (raises on a bad token), then receive and send in background tasks."""
        if self.api_base:
            discord.http.Route.BASE = self.api_base.rstrip("/")
        if self.gateway_url:
            discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(self.gateway_url)
        self._bus = bus
        discord.VoiceClient.warn_nacl = discord.VoiceClient.warn_dave = False  # no voice here
        client = self.client = discord.Client(intents=discord.Intents.default())
        client.event(self.on_message)
        client.event(self.on_ready)
        client.event(self.on_resumed)
        try:
            await client.login(self.token)
        except BaseException:
            await client.close()
            raise
        self._tasks = [
            asyncio.create_task(client.connect(reconnect=True), name="discord-gateway"),
            asyncio.create_task(self._send_loop(bus), name="discord-send"),
        ]
        bus.attach(self.name, self.reaches, self.send_now)

    async def stop(self) -> None:
        if self._bus is not None:
            self._bus.detach(self.name)
        tasks, self._tasks = self._tasks, []
        for task in tasks[1:]:
            task.cancel()
        if self.client is not None:
            await self.client.close()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def wait_closed(self) -> None:
        """Until the gateway connection ends for good (a fatal error raises it here)."""
        if self._tasks:
            await self._tasks[0]

    async def _send_loop(self, bus: Bus) -> None:
        async for out in bus.subscribe(self.name):
            try:
                await self.send(out)
            except Exception:  # one undeliverable message must not stop the others
                log.exception("could not send to Discord channel %s", out.chat_id)

    def reaches(self, chat_id: str) -> bool:
        """While the gateway is connected: Discord is reachable and the bot logged in."""
        client = self.client
        return (
            client is not None and client.is_ready() and not client.is_closed()
            and client.ws is not None and client.ws.open
        )  # fmt: skip

    async def send_now(self, out: Outbound) -> bool:
        if not self.reaches(out.chat_id):
            return False
        try:
            await self.send(out)
        except (discord.HTTPException, OSError, aiohttp.ClientError):  # Discord refused or is gone
            log.warning("could not send to Discord channel %s just now", out.chat_id, exc_info=True)
            return False
        return True

    async def on_ready(self) -> None:
        if self._bus is not None:
            self._bus.reachable(self.name)

    async def on_resumed(self) -> None:
        await self.on_ready()

    async def send(self, out: Outbound) -> None:
        assert self.client is not None, "start() the channel first"
        target: Any = self.client.get_channel(int(out.chat_id))
        if target is None:
            target = self.client.get_partial_messageable(int(out.chat_id))
        if out.kind == "typing":
            await target.typing()
            return
        if out.kind == "delta":
            return  # Discord gets the whole reply once
        asked = self._asked.pop(out.reply_to, None) if out.reply_to else None
        pieces = split_message(out.text) if out.text else []
        files = [discord.File(path) for path in out.files]
        if not pieces and not files:
            return
        pieces = pieces or [""]
        for i, piece in enumerate(pieces):
            last = i == len(pieces) - 1
            await target.send(
                piece or None,
                reference=asked if i == 0 else None,
                files=files if last and files else discord.utils.MISSING,
                mention_author=False if asked is not None else None,
            )

    def _is_for_me(self, message: discord.Message) -> bool:
        me = self.client.user if self.client is not None else None
        if me is None or message.author.bot or message.author.id == me.id:
            return False
        if isinstance(message.channel, discord.DMChannel):
            return self.dms
        if self.channels and str(message.channel.id) not in self.channels:
            return False
        return any(user.id == me.id for user in message.mentions)

    async def on_message(self, message: discord.Message) -> None:
        if self._bus is None or not self._is_for_me(message):
            return
        me = self.client.user if self.client is not None else None
        text = message.content
        if me is not None:
            text = re.sub(rf"<@!?{me.id}>", "", text).strip()
        ref = message.reference.resolved if message.reference is not None else None
        quoted = ref.content if isinstance(ref, discord.Message) else None
        inbound = Inbound(self.name, str(message.channel.id), f"discord:{message.author.id}",
                          text, quoted=quoted, context=_where(message))  # fmt: skip
        self._asked[inbound.id] = message
        while len(self._asked) > _REMEMBERED:
            self._asked.popitem(last=False)
        with contextlib.suppress(discord.HTTPException):
            await message.channel.typing()
        await self._bus.publish(inbound)


def _where(message: discord.Message) -> str:
    if isinstance(message.channel, discord.DMChannel):
        return f"Discord direct message from {message.author.display_name}"
    return f"Discord channel {message.channel.id}, from {message.author.display_name}"
