"""The admin panel's HTTP surface (SPEC AD-1..AD-4).

    GET  /admin                     the page (no auth: it shows the login form)
    GET  /admin/static/*            its script and style, served by nerve (no CDN)
    POST /admin/api/login           {password} → {token, expires_at} + the session cookie
    POST /admin/api/logout          GET /admin/api/session
    GET  /admin/api/dashboard       routes, breakers, cooldowns, probes, stats, health
    GET  /admin/api/series          ?window=1h|24h&by=route|model: the charts' time series
                                    (every replica's with Redis: gateway/timeseries*.py)
    GET  /admin/api/logs            ?kind=ERROR,FALLBACK&q=text&limit=200&after=<seq>
                                    (seq: the shared log's, increasing in log order)
    GET|PUT /admin/api/config       POST /admin/api/reload       (config_api.py)
    GET  /admin/api/keys            PUT /admin/api/keys/{provider}  (config_api.py)
    GET|POST /admin/api/access      POST /admin/api/access/{name}/revoke  (access_api.py)
    GET  /admin/api/memory[/records|/context]  DELETE .../records/{id}, .../users/{user_id}
                                    (memory_api.py)
    GET  /admin/api/jobs            DELETE /admin/api/jobs/{id}  (jobs_api.py)
    POST /admin/api/safety/check    GET /admin/api/safety/verdicts  (safety_api.py)
    GET  /admin/api/agents          (agents_api.py)

Every request from another machine must come over HTTPS (426). Everything under /admin/api
but login needs a session. Requests that change something must, when they carry a body, send it
as `application/json` (an empty POST such as reload needs no type) and, when the browser sends
an Origin, be same-origin: with the SameSite=Strict cookie that closes CSRF.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from nerve.admin.access_api import access_routes
from nerve.admin.agents_api import agents_routes
from nerve.admin.auth import COOKIE
from nerve.admin.config_api import config_routes
from nerve.admin.http import PAGE_HEADERS, Handler, TransportChecked, guard, read_json
from nerve.admin.jobs_api import jobs_routes
from nerve.admin.memory_api import memory_routes
from nerve.admin.panel import AdminPanel
from nerve.admin.safety_api import safety_routes
from nerve.errors import AuthError, RateLimited, RequestError
from nerve.gateway.resilience import Clock
from nerve.gateway.stats import price_of
from nerve.gateway.timeseries import BY, WINDOWS

__all__ = ["admin_routes", "mount_admin"]

STATIC = Path(__file__).parent / "static"


def admin_routes(panel: AdminPanel) -> list[BaseRoute]:
    auth, events = panel.auth, panel.events

    async def page(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers=PAGE_HEADERS)

    async def login(request: Request) -> Response:
        client = panel.client(request.scope)
        body = await read_json(request)
        try:
            await panel.throttle.attempt(client)
        except RateLimited as e:
            await events.record("AUTH_LOGIN", ok=False, client=client, reason=e.code)
            raise
        password = body.get("password")
        ok = isinstance(password, str) and await asyncio.to_thread(auth.check_password, password)
        if not ok:
            await events.record("AUTH_LOGIN", ok=False, client=client, reason="wrong_password")
            raise AuthError("wrong password", code="wrong_password")
        await panel.throttle.succeeded(client)
        session = auth.issue()
        await events.record("AUTH_LOGIN", ok=True, client=client, reason=None)
        response = JSONResponse({"token": session.token, "expires_at": session.expires_at})
        response.set_cookie(
            COOKIE,
            session.token,
            max_age=int(auth.session_seconds),
            path="/",
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
        )
        return response

    async def logout(request: Request) -> Response:
        await auth.revoke(await auth.session(request.scope))  # refused by every replica now
        await events.record("AUTH_LOGOUT", client=panel.client(request.scope))
        response = JSONResponse({"logged_out": True})
        response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
        return response

    async def session(request: Request) -> Response:
        current = await auth.session(request.scope)
        client = panel.client(request.scope)
        return JSONResponse({"expires_at": current.expires_at, "client": client})

    async def dashboard(request: Request) -> Response:
        panel.attach()
        state = panel.host.gateway  # with shared state (Redis): every replica's numbers
        breakers = await state.breaker_view()
        cooldowns = await state.cooldowns.view()
        stats = (await state.stats_view()).snapshot()
        routes = [
            {"name": r.name, "rules": len(r.rules), "examples": len(r.examples),
             "targets": [str(t) for t in r.targets]}
            for r in panel.host.config.routes
        ]  # fmt: skip
        prices = state.stats.prices
        priced = {
            str(t): price_of(prices, t.provider, t.model) is not None
            for r in panel.host.config.routes for t in r.targets
        }  # fmt: skip
        return JSONResponse({
            "health": await state.health(),
            "routes": routes,
            "priced": priced,  # a target without a price costs "no price", not $0
            "breakers": breakers,
            "cooldowns": cooldowns,
            "probes": state.prober.results if state.prober else {},
            "stats": stats,
        })  # fmt: skip

    async def series(request: Request) -> Response:
        panel.attach()
        window = request.query_params.get("window", "1h")
        by = request.query_params.get("by", "route")
        if window not in WINDOWS:
            raise RequestError(f"'window' is one of {', '.join(WINDOWS)}", param="window")
        if by not in BY:
            raise RequestError(f"'by' is one of {', '.join(BY)}", param="by")
        return JSONResponse(await panel.host.gateway.stats.timeseries.view(window, by))

    async def logs(request: Request) -> Response:
        panel.attach()
        params = request.query_params
        kinds = {k.strip().upper() for k in params.get("kind", "").split(",") if k.strip()}
        try:
            limit = min(2000, max(1, int(params.get("limit", "200"))))
            after = int(params.get("after", "0"))
        except ValueError:
            raise RequestError("'limit' and 'after' are integers", param="limit") from None
        # The shared log: the same list whichever worker or replica answers.
        found = await events.recent(
            kinds=kinds or None, q=params.get("q"), after=after, limit=limit
        )
        return JSONResponse({"events": found})

    return [
        Route("/admin", guard(panel, page, session=False), methods=["GET"]),
        Mount("/admin/static", app=TransportChecked(StaticFiles(directory=STATIC))),
        Route("/admin/api/login", guard(panel, login, session=False), methods=["POST"]),
        Route("/admin/api/logout", guard(panel, logout), methods=["POST"]),
        Route("/admin/api/session", guard(panel, session), methods=["GET"]),
        Route("/admin/api/dashboard", guard(panel, dashboard), methods=["GET"]),
        Route("/admin/api/series", guard(panel, series), methods=["GET"]),
        Route("/admin/api/logs", guard(panel, logs), methods=["GET"]),
        *(Route(path, guard(panel, h), methods=m) for path, h, m in page_routes(panel)),
    ]


def page_routes(panel: AdminPanel) -> list[tuple[str, Handler, list[str]]]:
    """The pages' APIs, each in its module."""
    pages = (config_routes, access_routes, memory_routes, jobs_routes, safety_routes, agents_routes)
    return [route for page in pages for route in page(panel)]


def mount_admin(host: Any, *, clock: Clock = time.monotonic) -> AdminPanel:
    """Build the panel for a NerveApp, add /admin and /admin/api/* to its FastAPI app, and
    make the gateway's /stats/reset require an admin session."""
    panel = AdminPanel(host, clock=clock)
    if panel.enabled:
        host.api.router.routes.extend(admin_routes(panel))
        host.gateway.admin_check = panel.auth.require
    return panel
