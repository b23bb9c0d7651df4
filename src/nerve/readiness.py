"""`GET /ready`: whether this process should be sent traffic now, for a load balancer.

`/health` says how the gateway is doing and answers as soon as the socket is up; `/ready` is
200 only between the end of the lifespan's start-up and the start of its shutdown, and only
while every check passes (the store at `storage.url` answers a query; with `redis.on_error:
closed`, Redis is reachable). Otherwise 503 with the reasons, so a balancer never routes a
request to a half-started, stopping or cut-off replica.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

__all__ = ["CHECK_SECONDS", "Readiness"]

CHECK_SECONDS = 2.0  # a check that takes longer counts as failed: the balancer should move on
Check = Callable[[], Awaitable[str | None]]  # None when fine, else why not


class Readiness:
    def __init__(self, checks: Mapping[str, Check]) -> None:
        self.checks = dict(checks)
        self.serving = False  # set by the lifespan: True once started, False once stopping

    async def reasons(self) -> list[str]:
        if not self.serving:
            return ["starting or stopping"]
        found: list[str] = []
        for name, check in self.checks.items():
            try:
                async with asyncio.timeout(CHECK_SECONDS):
                    why = await check()
            except TimeoutError:
                why = f"no answer within {CHECK_SECONDS:g} s"
            except Exception as e:  # any failure of a dependency is a reason, never a 500
                why = f"{type(e).__name__}: {e}"
            if why:
                found.append(f"{name}: {why}")
        return found

    def route(self) -> Route:
        async def ready(request: Request) -> JSONResponse:
            reasons = await self.reasons()
            body = {"ready": not reasons, "reasons": reasons}
            return JSONResponse(body, status_code=503 if reasons else 200)

        return Route("/ready", ready, methods=["GET"], include_in_schema=False)
