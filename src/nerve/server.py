"""Builds the ASGI application that `nerve serve` runs.

One Starlette app carries every route; `POST /v1/chat/completions` is dispatched before the
framework to a bare ASGI endpoint because it is the hot path. Every error, including the
framework's own 404/405, leaves as OpenAI-shaped JSON.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from nerve.config import Config, load_config
from nerve.errors import NerveError
from nerve.gateway.app import GatewayState, gateway_routes
from nerve.gateway.resilience import Clock

__all__ = ["NerveApp", "app_from_env", "build_app"]

log = logging.getLogger("nerve.server")
CHAT_PATH = "/v1/chat/completions"


class NerveApp:
    def __init__(self, config: Config, *, clock: Clock = time.monotonic) -> None:
        self.config = config
        self.gateway = GatewayState(config, clock=clock)

        @contextlib.asynccontextmanager
        async def lifespan(app: Starlette) -> AsyncIterator[None]:
            await self.gateway.open()
            try:
                yield
            finally:
                await self.gateway.close()

        self.starlette = Starlette(
            routes=gateway_routes(self.gateway),
            lifespan=lifespan,
            exception_handlers={
                HTTPException: _http_error,
                NerveError: _nerve_error,
                Exception: _unexpected_error,
            },
        )

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == CHAT_PATH and scope["method"] == "POST":
            await self.gateway.chat(scope, receive, send)
        else:
            await self.starlette(scope, receive, send)


def build_app(config: Config, *, clock: Clock = time.monotonic) -> NerveApp:
    return NerveApp(config, clock=clock)


def app_from_env() -> NerveApp:
    """Factory for `uvicorn --factory` (used by `nerve serve --workers N`)."""
    return build_app(load_config(os.environ.get("NERVE_CONFIG") or None))


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    kind = {404: "not_found_error", 405: "invalid_request_error"}.get(exc.status_code, "error")
    message = f"{request.method} {request.url.path}: {exc.detail}"
    body = {"error": {"message": message, "type": kind, "code": str(exc.status_code)}}
    return JSONResponse(body, status_code=exc.status_code, headers=exc.headers)


async def _nerve_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, NerveError)
    return JSONResponse(exc.to_dict(), status_code=exc.status, headers=exc.headers())


async def _unexpected_error(request: Request, exc: Exception) -> Response:
    log.exception("unexpected error on %s %s", request.method, request.url.path, exc_info=exc)
    body = {
        "error": {
            "message": "internal error; see the server log",
            "type": "server_error",
            "code": "internal",
        }
    }
    return JSONResponse(body, status_code=500)
