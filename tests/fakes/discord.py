"""A fake Discord on 127.0.0.1: the REST routes and the gateway websocket an unmodified discord.py
client uses to log in, connect, RESUME, receive messages, type and reply.

Point the client at it with `discord.http.Route.BASE = fake.api` and
`discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(fake.gateway)` (the channel does
this from `assistant.discord.api_base` / `gateway_url`). JSON bodies go out with Content-Type
exactly `application/json`: discord.py decodes nothing else. Every REST call the bot makes is
recorded in `calls` (method, path, JSON body) and announced on `next_call()`; gateway sessions
in `sessions` ("identify" / "resume"). `drop()` closes the websocket as Discord does when it
moves a bot (close code 4000: resumable); `invalidate_next_resume` answers the next RESUME with
INVALID_SESSION, so the bot must IDENTIFY again.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

from aiohttp import WSMsgType, web

__all__ = ["BOT_ID", "FakeDiscord"]

BOT_ID = "1000"
_BOT = {"id": BOT_ID, "username": "nerve", "discriminator": "0", "global_name": None,
        "avatar": None, "bot": True}  # fmt: skip
_APP = {"id": "2000", "name": "nerve", "description": "", "icon": None, "bot_public": True,
        "bot_require_code_grant": False, "owner": _BOT, "verify_key": "0" * 64,
        "flags": 0}  # fmt: skip


def _json(data: Any, status: int = 200) -> web.Response:
    return web.Response(
        body=json.dumps(data).encode(), status=status, content_type="application/json"
    )


def _user(user_id: str, name: str) -> dict[str, Any]:
    return {"id": user_id, "username": name, "discriminator": "0", "global_name": name,
            "avatar": None}  # fmt: skip


class FakeDiscord:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, Any]] = []
        self.sessions: list[str] = []
        self.invalidate_next_resume = False
        self._calls: asyncio.Queue[tuple[str, str, Any]] = asyncio.Queue()
        self._session_changed = asyncio.Condition()
        self._ws: web.WebSocketResponse | None = None
        self._seq = 0
        self._ids = itertools.count(5000)
        app = web.Application()
        app.router.add_get("/api/v10/users/@me", self._me)
        app.router.add_get("/api/v10/oauth2/applications/@me", self._application)
        app.router.add_post("/api/v10/channels/{cid}/typing", self._typing)
        app.router.add_post("/api/v10/channels/{cid}/messages", self._message)
        app.router.add_get("/gateway", self._gateway)
        self._runner = web.AppRunner(app)

    async def start(self) -> FakeDiscord:
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.api = f"http://127.0.0.1:{port}/api/v10"
        self.gateway = f"ws://127.0.0.1:{port}/gateway"
        return self

    async def stop(self) -> None:
        if self._ws is not None:
            await self._ws.close()
        await self._runner.cleanup()

    # REST
    async def _record(self, request: web.Request, answer: Any, body: Any = None) -> web.Response:
        call = (request.method, request.path.removeprefix("/api/v10"), body)
        self.calls.append(call)
        await self._calls.put(call)
        return _json(answer) if answer is not None else web.Response(status=204)

    async def _me(self, request: web.Request) -> web.Response:
        return await self._record(request, _BOT)

    async def _application(self, request: web.Request) -> web.Response:
        return await self._record(request, _APP)

    async def _typing(self, request: web.Request) -> web.Response:
        return await self._record(request, None)

    async def _message(self, request: web.Request) -> web.Response:
        body = await request.json()
        message = self._message_data(request.match_info["cid"], body.get("content", ""), _BOT)
        return await self._record(request, message, body)

    async def next_call(self, wait_seconds: float = 10) -> tuple[str, str, Any]:
        """The next REST call the bot makes (method, path without /api/v10, JSON body)."""
        return await asyncio.wait_for(self._calls.get(), wait_seconds)

    def _message_data(
        self, channel_id: str, content: str, author: dict[str, Any], **extra: Any
    ) -> dict[str, Any]:
        return {
            "id": str(next(self._ids)), "channel_id": channel_id, "author": author,
            "content": content, "timestamp": "2026-05-28T20:00:00+00:00",
            "edited_timestamp": None, "tts": False, "mention_everyone": False, "mentions": [],
            "mention_roles": [], "attachments": [], "embeds": [], "pinned": False, "type": 0,
            **extra,
        }  # fmt: skip

    # gateway
    async def _send(self, ws: web.WebSocketResponse, op: int, d: Any, t: str | None = None) -> None:
        payload: dict[str, Any] = {"op": op, "d": d, "s": None, "t": t}
        if op == 0:
            self._seq += 1
            payload["s"] = self._seq
        await ws.send_str(json.dumps(payload))

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await self._send(ws, 10, {"heartbeat_interval": 45000})
        async for msg in ws:
            if msg.type != WSMsgType.TEXT:
                break
            op = json.loads(msg.data)["op"]
            if op == 1:
                await self._send(ws, 11, None)
            elif op == 2:
                ready = {"v": 10, "user": _BOT, "guilds": [], "session_id": "s1",
                         "resume_gateway_url": self.gateway, "shard": [0, 1],
                         "application": {"id": _APP["id"], "flags": 0}}  # fmt: skip
                await self._send(ws, 0, ready, "READY")
                await self._session(ws, "identify")
            elif op == 6 and self.invalidate_next_resume:
                self.invalidate_next_resume = False
                await self._send(ws, 9, False)
            elif op == 6:
                await self._send(ws, 0, {}, "RESUMED")
                await self._session(ws, "resume")
        return ws

    async def _session(self, ws: web.WebSocketResponse, kind: str) -> None:
        async with self._session_changed:
            self._ws = ws
            self.sessions.append(kind)
            self._session_changed.notify_all()

    async def wait_sessions(self, count: int, wait_seconds: float = 10) -> list[str]:
        """Wait until the bot has started `count` gateway sessions (IDENTIFY or RESUME)."""
        async with self._session_changed:
            await asyncio.wait_for(
                self._session_changed.wait_for(lambda: len(self.sessions) >= count), wait_seconds
            )
        return list(self.sessions)

    async def drop(self, code: int = 4000) -> None:
        """Close the bot's websocket, as Discord does when it moves a session."""
        assert self._ws is not None
        ws, self._ws = self._ws, None
        await ws.close(code=code)

    async def post(
        self, channel_id: str, content: str, *, user: tuple[str, str] = ("42", "ana"),
        guild_id: str | None = "900", mention: bool = True,
    ) -> None:  # fmt: skip
        """A user writes in a channel (a guild's, or a DM when guild_id is None)."""
        assert self._ws is not None, "the bot is not connected"
        extra: dict[str, Any] = {"mentions": [_BOT] if mention else []}
        if guild_id is not None:
            extra["guild_id"] = guild_id
        data = self._message_data(channel_id, content, _user(*user), **extra)
        await self._send(self._ws, 0, data, "MESSAGE_CREATE")
