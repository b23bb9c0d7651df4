"""The one security boundary: every HTTP request and WebSocket passes here before any route.

- Without API keys (none in the config, none made with `nerve keys create`): nerve listens on
  loopback and trusts whoever reaches it, so only the Host check runs (hostguard.py, against DNS
  rebinding); the principal is LOCAL, counted by the caller's address.
- With keys: every path not in `PUBLIC` needs one: `Authorization: Bearer <key>`, or for a
  browser's WebSocket (which cannot set headers) the subprotocol `nerve.key.<key>`. A missing,
  wrong or revoked key gets the same 401 after the same work (a hash and a dict lookup). The
  key's `Principal` rides on the scope (`principal_of`); routes ask it what the key may do.

Public paths are listed here and nowhere else: the health check, the API docs, the web chat's
page and assets (its socket is not public), and `/admin`, which has its own login and session
(the admin panel's auth, admin/auth.py). tests/test_boundary.py walks the route table.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from typing import Any

from nerve.access.keyring import Keyring
from nerve.access.principal import SCOPE_KEY, Principal
from nerve.asgi import send_error
from nerve.errors import AuthError, NerveError
from nerve.hostguard import HostGuard

__all__ = ["KEY_PROTOCOL", "PUBLIC", "PUBLIC_PREFIXES", "Boundary", "bearer", "is_public"]

PUBLIC = frozenset(
    {"/health", "/docs", "/docs/oauth2-redirect", "/openapi.json", "/favicon.ico",
     "/chat", "/chat/chat.js", "/chat/chat.css"}
)  # fmt: skip
PUBLIC_PREFIXES = ("/admin/", "/admin")  # the panel authenticates its own sessions
KEY_PROTOCOL = "nerve.key."
NOBODY = Principal("public", client="public", routes=(), models=(), users=())
Scope = MutableMapping[str, Any]


def is_public(path: str) -> bool:
    return path in PUBLIC or path == "/admin" or path.startswith("/admin/")


def bearer(scope: Scope) -> bytes:
    """The key a request offers: its bearer token, or a WebSocket's `nerve.key.` subprotocol."""
    for name, value in scope["headers"]:
        if name == b"authorization":
            scheme, _, token = value.partition(b" ")
            return token.strip() if scheme.lower() == b"bearer" else b""
    if scope["type"] == "websocket":
        for protocol in scope.get("subprotocols") or ():
            if isinstance(protocol, str) and protocol.startswith(KEY_PROTOCOL):
                return protocol[len(KEY_PROTOCOL) :].encode()
    return b""


class Boundary:
    def __init__(
        self, app: Any, keyring: Callable[[], Keyring], hosts: Callable[[], HostGuard]
    ) -> None:
        self.app = app
        self.keyring = keyring  # resolved per request: a reload may swap them
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        try:
            scope[SCOPE_KEY] = self.admit(scope)
        except NerveError as e:
            await refuse(scope, send, e)
            return
        await self.app(scope, receive, send)

    def admit(self, scope: Scope) -> Principal:
        keyring = self.keyring()
        if not keyring.active:
            self.hosts().check(scope)
            client = scope.get("client")
            return Principal("local", client=f"ip:{client[0]}" if client else "ip:unknown")
        if is_public(scope["path"]):
            return NOBODY
        token = bearer(scope)
        principal = keyring.resolve(token)
        if principal is None:
            raise AuthError(
                "invalid API key" if token else
                "a valid API key is required: send 'Authorization: Bearer <key>'",
                code="invalid_api_key",
            )  # fmt: skip
        return principal


async def refuse(scope: Scope, send: Any, error: NerveError) -> None:
    if scope["type"] == "http":
        await send_error(send, error)
    else:  # before accept: the server answers the handshake with 403
        await send({"type": "websocket.close", "code": 1008, "reason": error.message})
