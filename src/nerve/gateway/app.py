"""The gateway's HTTP surface besides the chat endpoint: models, health, stats, metrics.

`GatewayState` owns everything with a lifetime (the upstream HTTP session, the gateway built on
it); it is opened and closed by the server's lifespan.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import aiohttp
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from nerve import __version__
from nerve.config import Config
from nerve.errors import NerveError
from nerve.gateway.chat import ChatEndpoint, ClientAuth
from nerve.gateway.core import Gateway
from nerve.gateway.probes import Prober
from nerve.gateway.providers import build_provider
from nerve.gateway.resilience import Breakers, Clock, Cooldowns, RateLimiter
from nerve.gateway.stats import Stats

__all__ = ["GatewayState", "gateway_routes"]


class GatewayState:
    def __init__(self, config: Config, *, clock: Clock = time.monotonic) -> None:
        self.config = config
        self.clock = clock
        self.started = time.time()
        self.auth = ClientAuth(config.server.api_keys)
        self.breakers = Breakers.from_config(config.limits.breaker, clock=clock)
        self.cooldowns = Cooldowns(clock=clock)
        self.limiter = RateLimiter.from_config(config.limits.rate, clock=clock)
        self.stats = Stats(prices=config.prices, clock=clock)
        self.session: aiohttp.ClientSession | None = None
        self._gateway: Gateway | None = None
        self._chat: ChatEndpoint | None = None
        self.prober: Prober | None = None
        self._probing: asyncio.Task[None] | None = None

    async def open(self) -> None:
        connector = aiohttp.TCPConnector(limit=0, ttl_dns_cache=300, keepalive_timeout=30)
        self.session = aiohttp.ClientSession(connector=connector, auto_decompress=True)
        providers = {p.name: build_provider(p, self.session) for p in self.config.providers}
        self._gateway = Gateway(
            self.config,
            providers,
            breakers=self.breakers,
            cooldowns=self.cooldowns,
            stats=self.stats,
        )
        targets = [t for r in self.config.routes for t in r.targets]
        self.prober = Prober(self._gateway, targets, interval=self.config.probes.interval_seconds)
        if self.config.probes.interval_seconds > 0:
            self._probing = asyncio.create_task(self.prober.run(), name="health probes")
        self._chat = ChatEndpoint(
            self._gateway,
            self.limiter,
            self.auth,
            max_body_bytes=self.config.limits.max_body_bytes,
        )

    async def close(self) -> None:
        if self._probing is not None:
            self._probing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._probing
        if self.session is not None:
            await self.session.close()

    @property
    def gateway(self) -> Gateway:
        if self._gateway is None:
            raise RuntimeError("the gateway is not open: the server's lifespan did not run")
        return self._gateway

    @property
    def chat(self) -> ChatEndpoint:
        if self._chat is None:
            raise RuntimeError("the gateway is not open: the server's lifespan did not run")
        return self._chat

    def models(self) -> list[str]:
        targets = {str(t) for r in self.config.routes for t in r.targets}
        return ["auto", *(r.name for r in self.config.routes), *sorted(targets)]

    def breaker_view(self) -> dict[str, dict[str, Any]]:
        """Every configured target's breaker (closed ones included), plus any other known one."""
        known = self.breakers.snapshot()
        targets = {str(t) for r in self.config.routes for t in r.targets} | set(known)
        return {
            key: known.get(key) or {"state": self.breakers.state(key), "consecutive_failures": 0}
            for key in sorted(targets)
        }

    def health(self) -> dict[str, Any]:
        snapshot = self.stats.snapshot()
        open_ = [k for k, v in self.breaker_view().items() if v["state"] != "closed"]
        return {
            "status": "degraded" if open_ else "ok",
            "version": __version__,
            "uptime_s": round(time.time() - self.started, 1),
            "routes": [r.name for r in self.config.routes],
            "providers": {
                p.name: "no API key" if p.missing_key else "configured"
                for p in self.config.providers
            },
            "calls": snapshot.get("calls", 0),
            "errors": snapshot.get("errors", 0),
            "rejections": snapshot.get("rejections", {}),
            "breakers_not_closed": open_,
            "probes": self.prober.results if self.prober else {},
        }


def gateway_routes(state: GatewayState) -> list[Route]:
    def guarded(handler: Any) -> Any:
        async def endpoint(request: Request) -> Response:
            try:
                state.auth.client_id(request.scope)
            except NerveError as e:
                return JSONResponse(e.to_dict(), status_code=e.status)
            response: Response = await handler(request)
            return response

        return endpoint

    async def models(request: Request) -> Response:
        data = [
            {"id": m, "object": "model", "created": 0, "owned_by": "nerve"} for m in state.models()
        ]
        return JSONResponse({"object": "list", "data": data})

    async def health(request: Request) -> Response:
        return JSONResponse(state.health())

    def snapshot() -> dict[str, Any]:
        snapshot = state.stats.snapshot(
            breakers=state.breaker_view(), cooldowns=state.cooldowns.snapshot()
        )
        snapshot["probes"] = state.prober.results if state.prober else {}
        return snapshot

    async def stats(request: Request) -> Response:
        return JSONResponse(snapshot())

    async def stats_reset(request: Request) -> Response:
        return JSONResponse({"previous": state.stats.reset()})

    async def cost_performance(request: Request) -> Response:
        return JSONResponse(state.stats.cost_performance())

    async def metrics(request: Request) -> Response:
        states = {key: view["state"] for key, view in state.breaker_view().items()}
        return PlainTextResponse(
            state.stats.prometheus(breakers=states),
            media_type="text/plain; version=0.0.4; charset=utf-8",
        )

    class Chat:  # a bare ASGI app: the server also dispatches to it before routing (hot path)
        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            await state.chat(scope, receive, send)

    return [
        Route("/v1/chat/completions", Chat(), methods=["POST"]),
        Route("/v1/models", guarded(models)),
        Route("/health", health),
        Route("/stats", guarded(stats)),
        Route("/stats/reset", guarded(stats_reset), methods=["GET", "POST"]),
        Route("/cost-performance", guarded(cost_performance)),
        Route("/metrics", guarded(metrics)),
    ]
