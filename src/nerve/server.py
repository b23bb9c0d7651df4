"""Builds the ASGI application that `nerve serve` runs.

One FastAPI app carries every route (OpenAPI at /docs for the /api routes); the model
endpoints (`POST /v1/chat/completions`, `/v1/messages`, `/v1/responses`, `/v1/embeddings`,
`/v1/completions`) are dispatched before the framework to bare ASGI endpoints because they are
the hot path. Every error, including the framework's own 404/405/422, leaves as OpenAI-shaped
JSON; request validation errors are 400s naming the field.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import AsyncIterator, Collection
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from nerve import __version__
from nerve.access import Boundary, Keyring
from nerve.access.keystore_sql import keystore_from_url
from nerve.admin import mount_admin
from nerve.agents import AgentRegistry, agents_router
from nerve.asgi import error_response
from nerve.assistant.host import AssistantHost
from nerve.bodylimit import BodyLimit
from nerve.channels.outbox import outbox_from_url
from nerve.channels.web import WebChat, loopback_or_key, web_chat_routes
from nerve.config import Config, find_config_file, load_config, parse_config_text
from nerve.errors import (
    ConfigError,
    NerveError,
    NotFound,
    RequestError,
)
from nerve.gateway.app import ENDPOINTS, GatewayState, gateway_routes
from nerve.gateway.evolution_routes import evolution_routes
from nerve.gateway.fanout_routes import fanout_router
from nerve.gateway.resilience import Clock
from nerve.hostguard import HostGuard
from nerve.hotreload import ConfigWatcher, changed_sections, restart_required, write_atomically
from nerve.mcp import MCP_PATHS, McpHttp, build_mcp_server
from nerve.memory import Memory, build_memory, memory_router
from nerve.openapi_doc import docs_routes, fix_openapi
from nerve.pipeline import build_pipeline
from nerve.pipeline.routes import pipeline_router
from nerve.readiness import Readiness
from nerve.serving import GuardedHttp, configure
from nerve.telemetry import serve_traced, start_tracing, stop_tracing
from nerve.tools import builtin_registry
from nerve.voice import Voice, voice_router

__all__ = ["NerveApp", "app_from_env", "build_app"]

log = logging.getLogger("nerve.server")
MODEL_PATHS = frozenset(ENDPOINTS)  # dispatched before the framework


class NerveApp:
    def __init__(
        self,
        config: Config,
        *,
        clock: Clock = time.monotonic,
        config_path: Path | None = None,
        channels: Collection[str] = ("web",),
    ) -> None:
        self.config = config
        self.config_path = config_path  # the file a reload re-reads (None: nothing to re-read)
        self.gateway = GatewayState(config, clock=clock)
        self.hosts = HostGuard(config.server)
        # The config's keys and the managed ones (`nerve keys create`), kept in the store.
        try:
            keys = keystore_from_url(config.storage.url)
        except ValueError as e:
            raise ConfigError(str(e), path="storage.url") from None
        self.keyring = Keyring(config.server.api_keys, store=keys)
        self.gateway.principals = self.keyring.principals
        self.access = self.gateway  # the admin Access page asks it for spend
        self._memory: Memory | None = None
        self.agents = AgentRegistry.from_config(config)  # opened with memory, in the same store
        self.voice = Voice.from_config(config)  # speech engines; models load on first use
        # The one tool registry: the assistant's tools, the MCP tools it uses, and the
        # pipeline's intent handlers all run through its `execute`.
        self.tools = builtin_registry()
        self.pipeline = build_pipeline(
            config, self._ask, remember=self._remember, delegate=self.agents.delegate,
            tools=self.tools,
        )  # fmt: skip
        # The traffic path judges with the pipeline's engine and remembers in this memory.
        self.gateway.safety = lambda: self.pipeline.safety
        self.gateway.memory = lambda: self._memory
        self._reloading = asyncio.Lock()
        self.watcher: ConfigWatcher | None = None
        if config_path is not None and config.server.config_poll_seconds > 0:
            self.watcher = ConfigWatcher(
                config_path, self._file_changed, interval=config.server.config_poll_seconds
            )
        self.reloaded_at: float | None = None
        self.gateway.health_parts["config"] = self._config_health
        self.gateway.health_parts["voice"] = lambda: self.voice.engines()

        # The assistant and its jobs serve these channels in this process ("web" for serve).
        self.assistant = AssistantHost(
            self, channels=channels, config_dir=config_path.parent if config_path else None
        )
        jobs = config.assistant.jobs  # what a closed tab misses is kept in the store's outbox
        self.web_chat = WebChat(
            outbox_from_url(config.storage.url), poll_seconds=jobs.poll_seconds,
            lease_seconds=jobs.lease_seconds,
        )  # fmt: skip

        @contextlib.asynccontextmanager
        async def lifespan(app: FastAPI) -> AsyncIterator[None]:
            # Opened in order, closed in reverse; a failure half-way closes what was opened.
            async with contextlib.AsyncExitStack() as stack:
                stack.push_async_callback(stop_tracing, start_tracing(config.telemetry))
                await self.keyring.open()
                stack.push_async_callback(self.keyring.close)
                await self.gateway.open()
                stack.push_async_callback(self.gateway.close)
                await self.admin.open()  # after the gateway: it subscribes to its outcomes
                stack.push_async_callback(self.admin.close)
                if config.memory.enabled:
                    self._memory = build_memory(config)
                    await self._memory.open()
                    stack.push_async_callback(self._memory.close)
                    # Before memory closes: the stores the traffic path still has pending.
                    stack.push_async_callback(self.gateway.path_memory.idle)
                await self.agents.open()
                stack.push_async_callback(self.agents.close)
                await self.assistant.open()  # needs the gateway and memory
                stack.push_async_callback(self.assistant.close)
                if "web" in self.assistant.channels:
                    await self.web_chat.start(self.assistant.bus)
                    stack.push_async_callback(self.web_chat.stop)
                if self.watcher is not None:
                    self.watcher.prime()  # the file as loaded is not a change
                    watching = asyncio.create_task(self.watcher.run(), name="config watcher")
                    stack.push_async_callback(_cancel, watching)
                await stack.enter_async_context(self.mcp_http.running())  # /mcp sessions
                self.readiness.serving = True
                try:
                    yield
                finally:
                    self.readiness.serving = False  # stopping: the balancer moves on now

        self.api = FastAPI(
            title="nerve",
            version=__version__,
            summary="A self-hosted intelligence layer for AI agents.",
            lifespan=lifespan,
            docs_url=None,  # docs_routes: the same page with Swagger UI served from the package
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
        self.api.include_router(agents_router(lambda: self.agents))
        self.api.include_router(voice_router(lambda: self.voice))
        self.api.router.routes.extend(gateway_routes(self.gateway))
        self.readiness = Readiness({"store": self._store_answers, "redis": self._shared_ok})
        self.api.router.routes.append(self.readiness.route())
        self.api.router.routes.extend(evolution_routes(lambda: self.gateway))
        self.api.router.routes.extend(
            web_chat_routes(
                lambda: self.assistant.bus if self.assistant.agent else None,
                channel=self.web_chat,
                authorize=loopback_or_key(lambda: self.keyring.active),
            )
        )
        fix_openapi(self.api)  # /openapi.json says what the app answers (400s, the boundary's)
        self.api.router.routes.extend(docs_routes("nerve"))
        self.admin = mount_admin(self, clock=clock)  # /admin, /admin/api/*; guards /stats/reset
        self.limited = BodyLimit(
            self.api, config.limits.max_body_bytes, config.limits.body_timeout_seconds
        )
        self.mcp = build_mcp_server(self)  # the MCP tools: /mcp here, stdio in `nerve mcp`
        self.mcp_http = McpHttp(
            self.mcp, keys_active=lambda: self.keyring.active,
            max_body_bytes=config.limits.max_body_bytes,
        )  # fmt: skip
        self.mcp_entry = BodyLimit(
            self.mcp_http, config.limits.max_body_bytes, config.limits.body_timeout_seconds
        )
        # Every request and WebSocket passes the one boundary first (nerve.access).
        self.entry: Any = Boundary(
            self._dispatch, lambda: self.keyring, lambda: self.hosts, config.server.cors_origins
        )
        if config.server.cors_origins:  # preflights and CORS headers for the listed apps only
            self.entry = CORSMiddleware(
                self.entry, allow_origins=config.server.cors_origins, allow_methods=["*"],
                allow_headers=["*"], expose_headers=["x-nerve-route", "x-nerve-provider",
                "x-nerve-model", "x-nerve-fallback", "x-nerve-decided-by", "x-nerve-guard",
                "x-nerve-memory"],
            )  # fmt: skip

    async def reload(self, text: str | None = None) -> dict[str, Any]:
        """Apply a new config (GW-18): `text`, else the config file as it is now on disk.

        The text is validated in full first; an invalid one raises ConfigError naming the key
        and changes nothing. A valid text given here is written to the config file (atomically)
        so a restart, and every replica watching the file, gets it too. In-flight requests
        finish on the config they started with.
        """
        async with self._reloading:
            given = text is not None
            if text is None:
                if self.config_path is None:
                    raise ConfigError(
                        "this server was started without a config file, so there is nothing "
                        "to re-read; send the new config's text instead"
                    )
                try:
                    text = self.config_path.read_text(encoding="utf-8")
                except OSError as e:
                    raise ConfigError(f"cannot read {self.config_path}: {e.strerror}") from None
            new = self._parse(text)
            if given and self.config_path is not None:
                try:
                    write_atomically(self.config_path, text)
                except OSError as e:
                    raise ConfigError(
                        f"cannot write {self.config_path}: {e.strerror}; nothing was changed"
                    ) from None
            if self.watcher is not None:
                self.watcher.seen(text)
            result = self._apply(new)
            await self.assistant.reload(new)  # the MCP server list (spawns/stops processes)
            return {**result, "persisted": self.config_path is not None}

    async def _file_changed(self, text: str) -> None:
        async with self._reloading:
            new = self._parse(text)
            self._apply(new)
            await self.assistant.reload(new)

    def _config_health(self) -> dict[str, Any]:
        return {
            "path": str(self.config_path) if self.config_path else None,
            "watching": self.watcher is not None,
            "reloaded_at": self.reloaded_at,
            "last_error": self.watcher.last_error if self.watcher else None,
        }

    def _parse(self, text: str) -> Config:
        source = str(self.config_path or "the new config")
        if not text.strip():  # a file caught mid-write, or emptied: never "the defaults"
            raise ConfigError(f"{source} is empty; nothing was changed")
        return parse_config_text(text, source=source)

    def _apply(self, new: Config) -> dict[str, Any]:
        # No await from here on: requests see the old config or the new one, never a mix.
        old, self.config = self.config, new
        self.pipeline = build_pipeline(  # first: the gateway's endpoints judge with its engine
            new, self._ask, remember=self._remember, delegate=self.agents.delegate,
            tools=self.tools,
        )  # fmt: skip
        self.gateway.reload(new)
        self.hosts = HostGuard(new.server)
        self.keyring.reconfigure(new.server.api_keys)
        self.reloaded_at = time.time()
        if new.voice != old.voice:
            self.voice = Voice.from_config(new)
        changed, restart = changed_sections(old, new), restart_required(old, new)
        log.warning(
            "RELOAD config applied: changed %s%s",
            ", ".join(changed) or "nothing",
            f"; restart needed for {', '.join(restart)}" if restart else "",
        )
        return {
            "reloaded": True,
            "changed": changed,
            "restart_required": restart,
            "routes": [r.name for r in new.routes],
        }

    async def _ask(self, messages: list[dict[str, Any]], **extra: Any) -> str:
        return await self.gateway.gateway.ask(messages, **extra)

    @property
    def memory(self) -> Memory:
        if self._memory is None:
            raise NotFound("memory is disabled in this server's config (memory.enabled: false)",
                           code="memory_disabled")  # fmt: skip
        return self._memory

    async def _store_answers(self) -> str | None:
        await self.agents.store.get("-ready-")  # one query on storage.url, whichever backend
        return None

    async def _shared_ok(self) -> str | None:
        shared = self.gateway.shared  # only a closed policy refuses traffic when Redis is down
        health = shared.health() if shared is not None else {"ok": True}
        if not health["ok"] and health["policy"] == "closed":
            return f"unreachable ({health['last_error']}) and redis.on_error is closed"
        return None

    async def _remember(self, text: str, user_id: str, summary: dict[str, Any]) -> None:
        if self._memory is not None:
            await self._memory.store_memory(
                user_id, tier="episodic", intent=summary["intent"], importance=0.5,
                data={"text": text, **summary}, language=summary.get("language"),
            )  # fmt: skip

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        await self.entry(scope, receive, send)

    async def _dispatch(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = scope.get("path")
        if scope["type"] == "http" and path in MODEL_PATHS and scope["method"] == "POST":
            await self.gateway.endpoint(path)(scope, receive, send)  # the hot path: no framework
        elif scope["type"] == "http" and scope["path"] in MCP_PATHS:
            await serve_traced(self.mcp_entry, scope, receive, send)  # MCP, streamable HTTP
        else:
            await serve_traced(self.limited, scope, receive, send)


def build_app(
    config: Config,
    *,
    clock: Clock = time.monotonic,
    config_path: Path | None = None,
    channels: Collection[str] = ("web",),
) -> NerveApp:
    """The app `nerve serve` runs; `channels`: which assistant channels this process serves
    (`nerve chat` passes "terminal", `nerve discord` "discord", `nerve mcp` none)."""
    return NerveApp(config, clock=clock, config_path=config_path, channels=channels)


def app_from_env() -> NerveApp:
    """Factory for `uvicorn --factory` (used by `nerve serve --workers N`)."""
    path = find_config_file(None, os.environ)
    config = load_config(str(path) if path else None)
    configure(GuardedHttp, config.limits)  # this worker's protocol (nerve serve --workers N)
    return build_app(config, config_path=path)


async def _cancel(task: asyncio.Task[None]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def _validation_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
    if first.get("type") == "json_invalid":  # its loc is a character offset, not a field
        error = RequestError(f"the request body is not valid JSON: {first['msg']}",
                             code="invalid_json")  # fmt: skip
        return error_response(error)
    loc = [str(p) for p in first.get("loc", ()) if p != "body"]
    param = ".".join(loc) or None
    message = f"'{param}': {first['msg']}" if param else str(first["msg"])
    return error_response(RequestError(message, param=param))


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    kinds = {400: "invalid_request_error", 404: "not_found_error", 405: "invalid_request_error"}
    kind = kinds.get(exc.status_code, "error")
    message = f"{request.method} {request.url.path}: {exc.detail}"
    body = {"error": {"message": message, "type": kind, "code": str(exc.status_code)}}
    return JSONResponse(body, status_code=exc.status_code, headers=exc.headers)


async def _nerve_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, NerveError)
    return error_response(exc)


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
