"""The one security boundary: every HTTP request and WebSocket passes here before any route.

- Without API keys (none in the config, none made with `nerve keys create`): nerve listens on
  loopback and trusts whoever reaches it, so only the Host check runs (hostguard.py, against DNS
  rebinding); the principal is LOCAL, counted by the caller's address.
- With keys: every path not in `PUBLIC` needs one: `Authorization: Bearer <key>`, or
  `x-api-key: <key>` (what Anthropic clients such as Claude Code send), or for a browser's
  WebSocket (which cannot set headers) the subprotocol `nerve.key.<key>`. A missing, wrong
  or revoked key gets the same 401 after the same work (a hash and a dict lookup). The key's
  `Principal` rides on the scope (`principal_of`); routes ask it what the key may do.

Before keys, two rules for every request that changes something or calls a model (any method
but GET, HEAD and OPTIONS): a browser page of another origin may not send it (403
`cross_origin`, unless its origin is in `server.cors_origins`), and a body must be JSON (415;
multipart only where an upload is taken, `FORM_PATHS`). A web page can otherwise drive a local
nerve blind with a CORS "simple request" (text/plain, no preflight) and spend the user's credit.

Public paths are listed here and nowhere else: the health check, the API docs, the web chat's
page and assets (its socket is not public), and `/admin`, which has its own login and session
(the admin panel's auth, admin/auth.py). tests/test_boundary.py walks the route table.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, MutableMapping
from typing import Any

from nerve.access.keyring import Keyring
from nerve.access.principal import SCOPE_KEY, Principal
from nerve.asgi import send_error
from nerve.errors import AuthError, Forbidden, NerveError, UnsupportedMediaType
from nerve.hostguard import HostGuard

__all__ = ["KEY_PROTOCOL", "PUBLIC", "PUBLIC_PREFIXES", "Boundary", "bearer", "is_public"]

PUBLIC = frozenset(
    {"/health", "/ready", "/docs", "/docs/oauth2-redirect", "/openapi.json", "/favicon.ico",
     "/chat", "/chat/chat.js", "/chat/markdown.js", "/chat/chat.css"}
)  # fmt: skip
# The panel (and /admin itself) authenticates its own sessions; /docs/static/ is Swagger UI's.
PUBLIC_PREFIXES = ("/admin/", "/docs/static/")
KEY_PROTOCOL = "nerve.key."
FORM_PATHS = frozenset({"/api/voice/transcribe"})  # may take multipart/form-data
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
NOBODY = Principal("public", client="public", routes=(), models=(), users=())
Scope = MutableMapping[str, Any]


def is_public(path: str) -> bool:
    return path in PUBLIC or path == "/admin" or path.startswith(PUBLIC_PREFIXES)


def bearer(scope: Scope) -> bytes:
    """The key a request offers: its bearer token, its `x-api-key` (the Anthropic SDKs' header),
    or a WebSocket's `nerve.key.` subprotocol."""
    api_key = b""
    for name, value in scope["headers"]:
        if name == b"authorization":
            scheme, _, token = value.partition(b" ")
            return token.strip() if scheme.lower() == b"bearer" else b""
        if name == b"x-api-key":
            api_key = value.strip()
    if api_key:
        return api_key
    if scope["type"] == "websocket":
        for protocol in scope.get("subprotocols") or ():
            if isinstance(protocol, str) and protocol.startswith(KEY_PROTOCOL):
                return protocol[len(KEY_PROTOCOL) :].encode()
    return b""


class Boundary:
    def __init__(
        self, app: Any, keyring: Callable[[], Keyring], hosts: Callable[[], HostGuard],
        cors_origins: Collection[str] = (),
    ) -> None:  # fmt: skip
        self.app = app
        self.keyring = keyring  # resolved per request: a reload may swap them
        self.hosts = hosts
        self.cors_origins = frozenset(o.rstrip("/") for o in cors_origins)

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
        principal = self._identify(scope)
        if scope["type"] == "http" and scope["method"] not in _SAFE_METHODS:
            self.check_browser_rules(scope)
        return principal

    def _identify(self, scope: Scope) -> Principal:
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
                "a valid API key is required: send 'Authorization: Bearer <key>' "
                "or 'x-api-key: <key>'",
                code="invalid_api_key",
            )  # fmt: skip
        return principal

    def check_browser_rules(self, scope: Scope) -> None:
        headers = dict(scope["headers"])  # the last of a repeated header; fine for these
        origin = headers.get(b"origin")
        if origin is not None:
            seen = origin.decode("latin-1").rstrip("/")
            hosts = {headers.get(b"host"), headers.get(b"x-forwarded-host")}  # a TLS proxy's
            if seen.partition("://")[2].encode("latin-1") not in hosts and (
                seen not in self.cors_origins
            ):
                raise Forbidden(
                    f"cross-origin request from {seen} refused; a browser app that may call "
                    "nerve goes in server.cors_origins",
                    code="cross_origin",
                )
        if b"transfer-encoding" in headers or headers.get(b"content-length", b"0") != b"0":
            mime = headers.get(b"content-type", b"").partition(b";")[0].strip().lower()
            json = mime == b"application/json" or mime.endswith(b"+json")
            if not json and not (mime == b"multipart/form-data" and scope["path"] in FORM_PATHS):
                raise UnsupportedMediaType(
                    "send the body as application/json"
                    + (f" (got {mime.decode('latin-1')})" if mime else " (no Content-Type)"),
                    code="json_required",
                )


async def refuse(scope: Scope, send: Any, error: NerveError) -> None:
    if scope["type"] == "http":
        await send_error(send, error)
    else:  # before accept: the server answers the handshake with 403
        await send({"type": "websocket.close", "code": 1008, "reason": error.message})
