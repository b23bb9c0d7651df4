"""The gateway's HTTP surface besides the chat endpoint: models, health, stats, metrics.

`GatewayState` owns everything with a lifetime (the upstream HTTP session, the gateway built on
it, the Redis link when `redis.url` shares the state between replicas: see resilience/shared.py);
it is opened and closed by the server's lifespan. Views (/health, /stats...) await the shared state.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from typing import Any

import aiohttp
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from nerve import __version__
from nerve.access.ledger import Ledger
from nerve.access.ledger_redis import RedisLedger
from nerve.access.ledger_sql import SqlLedger
from nerve.access.principal import Principal
from nerve.config import Config
from nerve.errors import AuthError, SharedStateUnavailable
from nerve.gateway.admission import KeyGate
from nerve.gateway.cache import ResponseCache, cache_view
from nerve.gateway.cache_store import CacheStore, backend_for
from nerve.gateway.core import Gateway
from nerve.gateway.dialects.base import Dialect
from nerve.gateway.dialects.chat import CHAT
from nerve.gateway.dialects.messages import MESSAGES, count_tokens_route
from nerve.gateway.dialects.openai_native import COMPLETIONS, EMBEDDINGS
from nerve.gateway.dialects.responses import RESPONSES
from nerve.gateway.endpoint import Endpoint
from nerve.gateway.learning.learner import Learner
from nerve.gateway.outcome import Outcome
from nerve.gateway.probes import Prober
from nerve.gateway.providers import build_provider
from nerve.gateway.recall import PathMemory
from nerve.gateway.resilience import Clock
from nerve.gateway.shared_admit import SharedKeyGate
from nerve.gateway.state import LOCAL_HEALTH, build_resilience
from nerve.gateway.stats import Stats
from nerve.gateway.traffic import TrafficPath
from nerve.memory import Memory
from nerve.safety import SafetyEngine

__all__ = ["ENDPOINTS", "GatewayState", "gateway_routes"]

# The model endpoints, each a dialect over the one gateway (bare ASGI: the hot path).
ENDPOINTS: dict[str, Dialect] = {
    "/v1/chat/completions": CHAT,
    "/v1/messages": MESSAGES,
    "/v1/responses": RESPONSES,
    "/v1/embeddings": EMBEDDINGS,
    "/v1/completions": COMPLETIONS,
}


class GatewayState:
    def __init__(self, config: Config, *, clock: Clock = time.monotonic) -> None:
        self.config = config
        self.clock = clock
        self.started = time.time()
        self.stats = Stats(prices=config.prices, clock=clock)
        # In-process state, or (redis.url) the same classes backed by Redis: see shared.py.
        self.resilience = build_resilience(config, self.stats, clock=clock)
        self.shared = self.resilience.shared
        self.breakers = self.resilience.breakers
        self.cooldowns = self.resilience.cooldowns
        self.limiter = self.resilience.limiter
        self.ledger: Ledger | None = None  # what keys spend: see open()
        self.cache_store: CacheStore | None = None  # the response cache's entries: see open()
        # Admission: step by step in-process, one script when the state is shared.
        self.keys = (
            KeyGate(self.resilience, None, config.prices) if self.shared is None
            else SharedKeyGate(self.shared, self.resilience, None, config.prices)
        )  # fmt: skip
        self.session: aiohttp.ClientSession | None = None
        self._gateway: Gateway | None = None
        self._endpoints: dict[str, Endpoint] = {}
        self.prober: Prober | None = None
        self._probing: asyncio.Task[None] | None = None
        # Sections other parts of the server add to /health (config reload status, engines...).
        self.health_parts: dict[str, Callable[[], Any]] = {}
        # The admin session check (set by the admin panel; awaited, raises NerveError; it reads
        # the store's revocations). None: no admin, so admin-only routes refuse everyone.
        self.admin_check: Callable[[Any], Awaitable[None]] | None = None
        # Every API key's principal (set by the server from its keyring): whose spend to show.
        self.principals: Callable[[], list[Principal]] = list
        # The traffic path's parts the server owns (SPEC TP): its one safety engine, read when
        # the endpoints are built, and its memory, read per request (None: disabled or closed).
        self.safety: Callable[[], SafetyEngine] = lambda: SafetyEngine(strict=config.safety.strict)
        self.memory: Callable[[], Memory | None] = lambda: None
        self.path_memory = PathMemory(
            lambda: self.memory(), max_contexts=config.memory.max_contexts,
            count=lambda event, n: self.stats.record_traffic("memory", event, n),
        )  # fmt: skip

    async def spend(self, names: list[str] | None = None) -> list[dict[str, Any]]:
        """Each budgeted key's spend in its current period (all keys', or those `names`)."""
        budgeted = [p for p in self.principals() if p.budget is not None]
        if names is not None:
            budgeted = [p for p in budgeted if p.name in names]
        if self.ledger is None or not budgeted:
            return []
        try:
            rows = await self.ledger.spend(budgeted)
        except Exception as e:
            raise SharedStateUnavailable(
                f"the ledger of key budgets cannot be read: {type(e).__name__}", retry_after=1
            ) from None
        limits = {p.name: p.budget.usd for p in budgeted if p.budget is not None}
        return [{**asdict(r), "budget_usd": limits[r.key],
                 "left_usd": round(max(0.0, limits[r.key] - r.usd - r.held_usd), 6)}
                for r in rows]  # fmt: skip

    async def open(self) -> None:
        if self.shared is not None:
            await self.shared.open()
        self.ledger = self._ledger()
        if isinstance(self.ledger, SqlLedger):
            await self.ledger.open()
        connector = aiohttp.TCPConnector(limit=0, ttl_dns_cache=300, keepalive_timeout=30)
        self.session = aiohttp.ClientSession(connector=connector, auto_decompress=True)
        self.keys.ledger = self.ledger
        wall = time.time if self.clock is time.monotonic else self.clock
        self.cache_store = CacheStore(  # Redis or the store; connects when first asked
            backend_for(self.config), stats=self.stats, clock=wall,
            retry_seconds=self.config.redis.retry_seconds,
        )  # fmt: skip
        # With redis.url the learner is a view of the statistics every replica shares.
        self._install(self.config, self.resilience.learner(self.config), [])

    def _install(
        self, config: Config, learner: Learner | None, observers: list[Callable[[Outcome], None]]
    ) -> None:
        """Build what a config makes (providers, the Gateway, the endpoints, the prober) and
        put it in place: the one path of `open` and `reload`."""
        assert self.session is not None
        providers = {p.name: build_provider(p, self.session) for p in config.providers}
        gateway = Gateway(
            config, providers, breakers=self.breakers, cooldowns=self.cooldowns, stats=self.stats,
            learner=learner,
        )  # fmt: skip
        gateway.observers = observers or gateway.observers
        self.config, self._gateway = config, gateway
        self.keys.gateway = gateway
        self._endpoints = self._build_endpoints(gateway, config)
        if self._probing is not None:
            self._probing.cancel()
            self._probing = None
        targets = [t for r in config.routes for t in r.targets]
        self.prober = Prober(gateway, targets, interval=config.probes.interval_seconds)
        if config.probes.interval_seconds > 0:
            self._probing = asyncio.create_task(self.prober.run(), name="health probes")

    def _build_endpoints(self, gateway: Gateway, config: Config) -> dict[str, Endpoint]:
        limits = config.limits
        traffic = TrafficPath(config, self.safety(), self.path_memory, self.stats)
        assert self.cache_store is not None
        cache = ResponseCache(config, self.cache_store, self.stats)
        return {
            path: Endpoint(
                gateway,
                self.keys,
                dialect,
                max_body_bytes=limits.max_body_bytes,
                body_seconds=limits.body_timeout_seconds,
                keepalive_seconds=limits.stream_keepalive_seconds,
                traffic=traffic,
                cache=cache if cache.configured else None,
            )
            for path, dialect in ENDPOINTS.items()
        }

    async def close(self) -> None:
        if self._probing is not None:
            self._probing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._probing
        if self.session is not None:
            await self.session.close()
        if isinstance(self.ledger, SqlLedger):
            await self.ledger.close()
        if self.cache_store is not None:
            await self.cache_store.close()
        if self.shared is not None:
            await self.shared.close()
        if self.resilience.series is not None:
            await self.resilience.series.close()

    def _ledger(self) -> Ledger:
        """What keys spend: in Redis beside the limits when shared, else in the store."""
        wall = time.time if self.clock is time.monotonic else self.clock  # calendar periods
        if self.shared is not None:
            return RedisLedger(self.shared.redis, prefix=self.shared.prefix, clock=wall)
        return SqlLedger(self.config.storage.url, clock=wall)

    def reload(self, config: Config) -> None:
        """Swap in a new config (GW-18); synchronous, so no request sees half of it.

        Requests in flight keep the Gateway and Endpoint they started with. Breaker,
        cooldown, rate-limit and stats state is kept: it is keyed by target and client, so an
        unchanged candidate keeps its open breaker or its 429 rest across the reload.
        """
        if self.session is None:
            raise RuntimeError("the gateway is not open: the server's lifespan did not run")
        old = self.gateway
        if config.limits.breaker != self.config.limits.breaker:
            self.breakers.configure(config.limits.breaker)
        if config.limits.rate != self.config.limits.rate:
            self.limiter = self.resilience.limiter_for(config.limits.rate)
        self.stats.set_prices(config.prices)
        self.path_memory.max_contexts = config.memory.max_contexts  # its stores in flight stay
        self.keys.prices = config.prices  # the keys' limiters keep their state
        self.keys.limiter = self.limiter
        # What was learnt about candidates that remain is kept; the learner and the event
        # log keep listening.
        self._install(config, old.learner, old.observers)

    @property
    def gateway(self) -> Gateway:
        if self._gateway is None:
            raise RuntimeError("the gateway is not open: the server's lifespan did not run")
        return self._gateway

    def endpoint(self, path: str) -> Endpoint:
        """The model endpoint serving `path` (one of ENDPOINTS)."""
        endpoint = self._endpoints.get(path)
        if endpoint is None:
            raise RuntimeError("the gateway is not open: the server's lifespan did not run")
        return endpoint

    async def chat(self, scope: Any, receive: Any, send: Any) -> None:
        await self.endpoint("/v1/chat/completions")(scope, receive, send)

    def models(self) -> list[str]:
        targets = {str(t) for r in self.config.routes for t in r.targets}
        return ["auto", *(r.name for r in self.config.routes), *sorted(targets)]

    async def breaker_view(self) -> dict[str, dict[str, Any]]:
        """Every configured target's breaker (closed ones included), plus any other known one."""
        known = await self.breakers.view()
        targets = {str(t) for r in self.config.routes for t in r.targets} | set(known)
        closed = {"state": "closed", "consecutive_failures": 0}
        return {key: known.get(key) or dict(closed) for key in sorted(targets)}

    async def stats_view(self) -> Stats:
        """The stats to show: this process's, or every replica's sum with shared state."""
        return self.stats if self.shared is None else await self.shared.stats_view()

    async def stats_reset(self) -> dict[str, Any]:
        """Clear the stats (every replica's with shared state); returns what was cleared."""
        return self.stats.reset() if self.shared is None else await self.shared.stats_reset()

    async def health(self) -> dict[str, Any]:
        snapshot = (await self.stats_view()).snapshot()
        breakers = await self.breaker_view()
        open_ = [k for k, v in breakers.items() if v["state"] != "closed"]
        shared = dict(LOCAL_HEALTH) if self.shared is None else self.shared.health()
        return {
            "status": "degraded" if open_ or not shared["ok"] else "ok",
            "reasons": _degraded_because(breakers, open_, shared),
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
            "shared_state": shared,
            **{name: part() for name, part in self.health_parts.items()},
        }


def _degraded_because(
    breakers: dict[str, dict[str, Any]], open_: list[str], shared: dict[str, Any]
) -> list[str]:
    """Why /health says degraded, one sentence each: what a person needs to know and since
    when (empty when it is ok)."""
    reasons = []
    for key in open_:
        view = breakers[key]
        ago = view.get("opened_at_ago_s")
        since = f" {ago:.0f} s ago" if isinstance(ago, int | float) else ""
        retry = view.get("half_open_in_s")
        again = f"; it is tried again in {retry:.0f} s" if isinstance(retry, int | float) else ""
        reasons.append(
            f"the breaker of {key} is {view['state']} after {view['consecutive_failures']} "
            f"failures in a row (opened{since}){again}"
        )
    if not shared.get("ok", True):
        down = shared.get("degraded_since")
        when = f" since {time.strftime('%H:%M:%S', time.localtime(down))}" if down else ""
        reasons.append(
            f"Redis ({shared.get('url')}) is unreachable{when}: {shared.get('last_error')}; "
            f"policy {shared.get('policy')}"
        )
    return reasons


def gateway_routes(state: GatewayState) -> list[Route]:
    def admin_only(handler: Any) -> Any:
        async def endpoint(request: Request) -> Response:
            # A NerveError raised here is answered by the app's one handler (server.py).
            if state.admin_check is None:
                raise AuthError("needs an admin session; admin is disabled", code="no_admin")
            await state.admin_check(request.scope)
            response: Response = await handler(request)
            return response

        return endpoint

    async def models(request: Request) -> Response:
        # One list both SDKs read: OpenAI's fields (object, owned_by) and Anthropic's (type,
        # display_name, created_at, has_more...). Answered from the config: no upstream call.
        names = state.models()
        data = [{"id": m, "object": "model", "created": 0, "owned_by": "nerve",
                 "type": "model", "display_name": m, "created_at": "1970-01-01T00:00:00Z"}
                for m in names]  # fmt: skip
        return JSONResponse({"object": "list", "data": data, "has_more": False,
                             "first_id": names[0] if names else None,
                             "last_id": names[-1] if names else None})  # fmt: skip

    async def health(request: Request) -> Response:
        return JSONResponse(await state.health())

    async def stats(request: Request) -> Response:
        view = await state.stats_view()
        snapshot = view.snapshot(
            breakers=await state.breaker_view(), cooldowns=await state.cooldowns.view()
        )
        snapshot["probes"] = state.prober.results if state.prober else {}
        snapshot["cache"] = cache_view(snapshot["traffic"].pop("cache", {}))
        snapshot["budgets"] = await state.spend()
        return JSONResponse(snapshot)

    async def stats_reset(request: Request) -> Response:
        return JSONResponse({"previous": await state.stats_reset()})

    async def cost_performance(request: Request) -> Response:
        return JSONResponse((await state.stats_view()).cost_performance())

    async def metrics(request: Request) -> Response:
        states = {key: view["state"] for key, view in (await state.breaker_view()).items()}
        return PlainTextResponse(
            (await state.stats_view()).prometheus(breakers=states),
            media_type="text/plain; version=0.0.4; charset=utf-8",
        )

    class Model:  # a bare ASGI app: the server also dispatches to it before routing (hot path)
        def __init__(self, path: str) -> None:
            self.path = path

        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            await state.endpoint(self.path)(scope, receive, send)

    async def count_tokens(request: Request) -> Response:
        return await count_tokens_route(state.gateway, request)

    return [
        *(Route(path, Model(path), methods=["POST"]) for path in ENDPOINTS),
        Route("/v1/messages/count_tokens", count_tokens, methods=["POST"]),
        Route("/v1/models", models),
        Route("/v1/models/", models),  # never a redirect: some clients add the slash
        Route("/health", health),
        Route("/stats", stats),
        Route("/stats/reset", admin_only(stats_reset), methods=["GET", "POST"]),
        Route("/cost-performance", cost_performance),
        Route("/metrics", metrics),
    ]
