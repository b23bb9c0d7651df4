"""The admin API's request plumbing: the guard every endpoint sits behind (HTTPS from other
machines, the session, JSON bodies and same origin for changes) and the one place a NerveError
becomes a JSON response for /admin."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from nerve.admin.auth import check_transport
from nerve.admin.panel import AdminPanel
from nerve.asgi import error_response
from nerve.errors import Forbidden, NerveError, RequestError, UnsupportedMediaType

__all__ = ["PAGE_HEADERS", "Handler", "TransportChecked", "guard", "read_json"]

PAGE_HEADERS = {
    "content-security-policy": "default-src 'self'; img-src 'self' data:; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}
Handler = Callable[[Request], Awaitable[Response]]


async def read_json(request: Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError:
        raise RequestError("the body must be a JSON object", code="invalid_json") from None
    if not isinstance(body, dict):
        raise RequestError("the body must be a JSON object", code="invalid_json")
    return body


def _declares_body(request: Request) -> bool:
    if "transfer-encoding" in request.headers:
        return True
    length = request.headers.get("content-length")
    try:
        return length is not None and int(length) != 0
    except ValueError:
        return True


async def _same_origin(request: Request) -> None:
    # A body must be JSON (a cross-site form cannot send that without a preflight); no body at
    # all (an action such as reload) needs no type. The body is read only when no header
    # announces one (HTTP/2 may omit both), to be sure it is empty; the handler reuses it.
    if not request.headers.get("content-type", "").startswith("application/json") and (
        _declares_body(request) or await request.body()
    ):
        raise UnsupportedMediaType(
            "send the body as application/json (or send no body)", code="json_required"
        )
    origin = request.headers.get("origin")
    # A TLS proxy may rewrite Host; the host the browser saw is then in X-Forwarded-Host.
    hosts = {request.headers.get("host"), request.headers.get("x-forwarded-host")}
    if origin is not None and origin.partition("://")[2] not in hosts:
        # Stricter than the boundary: server.cors_origins does not open the admin panel.
        raise Forbidden(f"cross-origin request from {origin} refused", code="cross_origin")


def guard(panel: AdminPanel, handler: Handler, *, session: bool = True) -> Handler:
    async def endpoint(request: Request) -> Response:
        try:
            check_transport(request.scope)
            if session:
                await panel.auth.session(request.scope)
            if request.method not in ("GET", "HEAD"):
                await _same_origin(request)
            response = await handler(request)
        except NerveError as e:
            response = error_response(e)
        response.headers.setdefault("cache-control", "no-store")
        return response

    return endpoint


class TransportChecked:
    """The static files, behind the same HTTPS rule as the rest of /admin."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            check_transport(scope)
        except NerveError as e:
            response = error_response(e)
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)
