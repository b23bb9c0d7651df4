"""Builds the ASGI application that `nerve serve` runs.

One FastAPI app carries every route (OpenAPI at /docs for the /api routes); `POST
/v1/chat/completions` is dispatched before the framework to a bare ASGI endpoint because it is
the hot path. Every error, including the framework's own 404/405/422, leaves as OpenAI-shaped
JSON; request validation errors are 400s naming the field.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from nerve import __version__
from nerve.config import Config, load_config
from nerve.errors import NerveError, NotFound, PayloadTooLarge, RequestError
from nerve.gateway.app import GatewayState, gateway_routes
from nerve.gateway.chat import send_error
from nerve.gateway.fanout_routes import fanout_router
from nerve.gateway.resilience import Clock
from nerve.memory import Memory, build_memory, memory_router
from nerve.pipeline import build_pipeline
from nerve.pipeline.routes import pipeline_router

__all__ = ["NerveApp", "app_from_env", "build_app"]

log = logging.getLogger("nerve.server")
CHAT_PATH = "/v1/chat/completions"


class NerveApp:
    def __init__(self, config: Config, *, clock: Clock = time.monotonic) -> None:
        self.config = config
        self.gateway = GatewayState(config, clock=clock)
        self._memory: Memory | None = None
        self.pipeline = build_pipeline(config, self._ask, remember=self._remember)

        @contextlib.asynccontextmanager
        async def lifespan(app: FastAPI) -> AsyncIterator[None]:
            await self.gateway.open()
            if config.memory.enabled:
                memory = build_memory(config)
                await memory.open()
                self._memory = memory
            try:
                yield
            finally:
                if self._memory is not None:
                    await self._memory.close()
                await self.gateway.close()

        self.api = FastAPI(
            title="nerve",
            version=__version__,
            summary="A self-hosted intelligence layer for AI agents.",
            lifespan=lifespan,
            docs_url="/docs",
            redoc_url=None,
            exception_handlers={
                RequestValidationError: _validation_error,
                HTTPException: _http_error,
                NerveError: _nerve_error,
                Exception: _unexpected_error,
            },
        )
        self.api.include_router(pipeline_router(lambda: self.pipeline))
        self.api.include_router(fanout_router(lambda: self.gateway))
        self.api.include_router(
            memory_router(lambda: self.memory, max_contexts=config.memory.max_contexts)
        )
        self.api.router.routes.extend(gateway_routes(self.gateway))
        self.limited = BodyLimit(self.api, config.limits.max_body_bytes)

    async def _ask(self, messages: list[dict[str, Any]], **extra: Any) -> str:
        return await self.gateway.gateway.ask(messages, **extra)

    @property
    def memory(self) -> Memory:
        if self._memory is None:
            raise NotFound("memory is disabled in this server's config (memory.enabled: false)",
                           code="memory_disabled")  # fmt: skip
        return self._memory

    async def _remember(self, text: str, user_id: str, summary: dict[str, Any]) -> None:
        if self._memory is not None:
            await self._memory.store_memory(
                user_id, tier="episodic", intent=summary["intent"], importance=0.5,
                data={"text": text, **summary}, language=summary.get("language"),
            )  # fmt: skip

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == CHAT_PATH and scope["method"] == "POST":
            await self.gateway.chat(scope, receive, send)  # the hot path skips the framework
        else:
            await self.limited(scope, receive, send)


class BodyLimit:
    """413 for bodies over the limit: from Content-Length up front, else while reading."""

    def __init__(self, app: Any, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        too_large = PayloadTooLarge(
            f"request body exceeds {self.limit} bytes", code="body_too_large"
        )
        for name, value in scope["headers"]:
            if name == b"content-length" and value.isdigit() and int(value) > self.limit:
                await send_error(send, too_large)
                return
        seen = 0

        async def counted() -> Any:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:
                raise too_large
            return message

        await self.app(scope, counted, send)


def build_app(config: Config, *, clock: Clock = time.monotonic) -> NerveApp:
    return NerveApp(config, clock=clock)


def app_from_env() -> NerveApp:
    """Factory for `uvicorn --factory` (used by `nerve serve --workers N`)."""
    return build_app(load_config(os.environ.get("NERVE_CONFIG") or None))


async def _validation_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
    loc = [str(p) for p in first.get("loc", ()) if p != "body"]
    param = ".".join(loc) or None
    message = f"'{param}': {first['msg']}" if param else str(first["msg"])
    error = RequestError(message, param=param)
    return JSONResponse(error.to_dict(), status_code=400)


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
