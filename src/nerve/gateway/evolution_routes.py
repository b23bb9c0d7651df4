"""`GET /evolution` and `POST /evolution/reset` (SPEC GW-12): the learning router, inspected.

GET returns `Learner.view()` (every replica's statistics with redis.url): per route, each
candidate's calls, recent success rate, latency and cost EWMAs, score and share of recent first
choices, plus the current preference, the configured order and the learning config; and under
`routing` the cascade's layers in order, how many of the recent outcomes each layer decided
(`decided_by`; "named" when the client named a route or model), and per route its `when` and
its candidates grouped into the tiers whose members take turns (SPEC GW-5, TP-3).
POST /evolution/reset forgets what was learnt (for every replica), for one route
(`{"route": "code"}`) or all (no body), and returns what it cleared. GET needs the API key like
/stats; the reset needs the admin session like /stats/reset. The routes take a getter so they
always reach the current gateway.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import orjson
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from nerve.errors import AuthError, RequestError
from nerve.gateway.core import Gateway
from nerve.gateway.router import LAYERS

__all__ = ["evolution_routes"]


class _State(Protocol):
    """What the routes need of GatewayState."""

    @property
    def gateway(self) -> Gateway: ...

    @property
    def admin_check(self) -> Callable[[Any], Awaitable[None]] | None: ...


Handler = Callable[[_State, Request], Any]


def evolution_routes(state_getter: Callable[[], _State]) -> list[Route]:
    def guarded(handler: Handler, *, admin: bool = False) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            # A NerveError raised here is answered by the app's one handler (server.py).
            state = state_getter()
            if admin:  # the key was checked by the boundary; this needs an admin too
                if state.admin_check is None:
                    raise AuthError("needs an admin session; admin is disabled", code="no_admin")
                await state.admin_check(request.scope)
            return JSONResponse(await handler(state, request))

        return endpoint

    async def evolution(state: _State, request: Request) -> dict[str, Any]:
        view = await state.gateway.learner.view()
        return {**view, "routing": routing_view(state.gateway, view.get("recent", []))}

    async def reset(state: _State, request: Request) -> dict[str, Any]:
        raw = await request.body()
        try:
            body = orjson.loads(raw) if raw.strip() else {}
        except orjson.JSONDecodeError:
            raise RequestError("the body is not valid JSON", code="invalid_json") from None
        route = body.get("route") if isinstance(body, dict) else None
        if not isinstance(body, dict) or not isinstance(route, str | None):
            raise RequestError('expected {"route": "<name>"} or no body', param="route")
        return {"previous": await state.gateway.learner.forget(route)}

    return [
        Route("/evolution", guarded(evolution), methods=["GET"]),
        Route("/evolution/reset", guarded(reset, admin=True), methods=["POST"]),
    ]


def routing_view(gateway: Gateway, recent: list[dict[str, Any]]) -> dict[str, Any]:
    """How routes are chosen, and which layer chose the recent ones."""
    decided = Counter(o.get("decided_by") or "named" for o in recent)
    routes = {
        r.name: {
            "when": r.when.model_dump(exclude_none=True, exclude_defaults=True) if r.when else None,
            "tiers": [[str(t) for t in tier] for tier in r.tiers],
        }
        for r in gateway.config.routes
    }
    return {"layers": list(LAYERS), "decided_by": dict(decided), "routes": routes}
