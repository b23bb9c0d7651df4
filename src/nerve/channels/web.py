"""The web chat channel: a page at /chat and a WebSocket at /chat/ws carrying bus messages.

    browser → server   {"text": "...", "quoted": "..."?}              one Inbound each
    server → browser   {"kind": "hello", "chat_id": "..."}            once, on connect
                       {"kind": "typing" | "delta" | "message", "text", "files", "reply_to",
                        "id"}  (delta: a piece of the reply as it is written; never kept)
                       + "queued_at" (epoch seconds) on a message kept while the chat was closed

`web_chat_routes(get_target)` serves either an `Assistant` (each message answered directly) or a
`Bus` (messages published; the `WebChat` channel, web_channel.py, subscribes to "web" and routes
every Outbound, reminders included, to the sockets of its `chat_id`, or keeps it in the outbox
while none is open). The page keeps its chat id in localStorage, so a reconnecting tab, on any
replica, gets what was kept for its chat; `id`, when set, is stable across a repeated delivery.
By default only loopback clients are served and a cross-site Origin is refused; pass
`authorize` to open it up.

Whose chat it is: `?user=` names the user, "web" by default. A socket opened with a key limited
to some users (server.api_keys `users`) is its first user's unless `?user=` names another of
them; a user it may not act for is refused (close 1008) before the socket opens.
"""

from __future__ import annotations

import ipaddress
import json
import re
import uuid
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from nerve.access import principal_of
from nerve.access.boundary import KEY_PROTOCOL  # the page offers "nerve" and "nerve.key.<key>"
from nerve.assistant import Assistant, Bus, Inbound, Outbound
from nerve.channels.web_channel import WebChat
from nerve.errors import Forbidden

__all__ = ["KEY_PROTOCOL", "WebChat", "loopback_only", "loopback_or_key", "web_chat_routes"]

STATIC = Path(__file__).parent / "static"
CHAT_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
MAX_TEXT = 16_000
PAGE_HEADERS = {
    "content-security-policy": "default-src 'self'; connect-src 'self'; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}
Target = Assistant | Bus


def loopback_only(ws: WebSocket) -> bool:
    """A loopback peer that addressed the server by a loopback name. The Host check stops DNS
    rebinding: a web page of evil.example re-pointed at 127.0.0.1 must not reach the assistant
    (its tools run shell commands) through the user's own browser."""
    return _is_loopback(ws.client.host if ws.client else "") and _is_loopback(
        urlsplit(f"//{ws.headers.get('host', '')}").hostname or ""
    )


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def loopback_or_key(keys_active: Callable[[], bool]) -> Callable[[WebSocket], bool]:
    """Without API keys, loopback clients only; with keys (which the server's boundary has
    checked: the page offers its key as a subprotocol, since a browser cannot set headers on a
    WebSocket), loopback clients, or others over wss:// — a key must travel inside TLS, as the
    admin panel answers plain http from elsewhere with 426."""

    def authorize(ws: WebSocket) -> bool:
        if loopback_only(ws):
            return True
        return keys_active() and ws.scope.get("scheme") == "wss"

    return authorize


def _same_origin(ws: WebSocket) -> bool:
    """A browser always sends Origin: refuse pages of other sites (cross-site WebSocket use)."""
    origin = ws.headers.get("origin")
    return origin is None or urlsplit(origin).netloc == ws.headers.get("host")


def web_chat_routes(
    get_target: Callable[[], Target | None],
    *,
    channel: WebChat | None = None,
    authorize: Callable[[WebSocket], bool] = loopback_only,
) -> list[BaseRoute]:
    web = channel or WebChat()

    async def page(request: Request) -> Response:
        return FileResponse(STATIC / "chat.html", headers=PAGE_HEADERS)

    def asset(name: str, media_type: str) -> Route:
        async def serve(request: Request) -> Response:
            return FileResponse(STATIC / name, media_type=media_type, headers=PAGE_HEADERS)

        return Route(f"/chat/{name}", serve, methods=["GET"])

    async def socket(ws: WebSocket) -> None:
        target = get_target()
        chat_id = ws.query_params.get("chat") or uuid.uuid4().hex
        if (
            target is None
            or not _same_origin(ws)
            or not authorize(ws)
            or not CHAT_ID.match(chat_id)
        ):
            await ws.close(code=1008)
            return
        asked = ws.query_params.get("user")
        try:
            user_id = principal_of(ws.scope).user_for(asked[:200] if asked else None, "web")
        except Forbidden as e:
            await ws.close(code=1008, reason=e.message)
            return
        # A browser that offered subprotocols needs one chosen, or it drops the socket.
        await ws.accept(
            subprotocol="nerve" if "nerve" in (ws.scope.get("subprotocols") or []) else None
        )
        if isinstance(target, Bus) and web.bus is not target:
            await web.start(target)
        try:
            await ws.send_json({"kind": "hello", "chat_id": chat_id})
            await web.connected(chat_id, ws, user_id)  # after hello: what was kept comes next
            while True:
                try:
                    data = json.loads(await ws.receive_text())
                except ValueError:
                    data = None
                text = data.get("text") if isinstance(data, dict) else None
                if not isinstance(text, str) or not text.strip() or len(text) > MAX_TEXT:
                    await ws.send_json({"kind": "error", "text": 'send {"text": "..."}'})
                    continue
                quoted = data.get("quoted")
                msg = Inbound(web.name, chat_id, user_id, text,
                              quoted=quoted if isinstance(quoted, str) else None)  # fmt: skip
                if isinstance(target, Bus):
                    await target.publish(msg)
                else:
                    await web.send(Outbound(web.name, chat_id, kind="typing", reply_to=msg.id))
                    await web.send(await target.reply(msg))
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            web.disconnected(chat_id, ws, user_id)

    return [
        Route("/chat", page, methods=["GET"]),
        asset("chat.js", "text/javascript"),
        asset("markdown.js", "text/javascript"),
        asset("chat.css", "text/css"),
        WebSocketRoute("/chat/ws", socket),
    ]
