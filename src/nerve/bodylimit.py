"""Request bodies that are too big or too slow: 413 / 408, before any route waits on them."""

from __future__ import annotations

import asyncio
from typing import Any

from nerve.asgi import send_error
from nerve.errors import PayloadTooLarge, RequestTimeout

__all__ = ["BodyLimit"]


class _Refused(BaseException):
    """Raised out of `receive`: a BaseException, so no route or framework catches it on its way
    (FastAPI turns any Exception while parsing a body into a 400) back to BodyLimit."""

    def __init__(self, error: PayloadTooLarge | RequestTimeout) -> None:
        self.error = error


class BodyLimit:
    """413 for bodies over the limit: from Content-Length up front, else while reading; 408
    when the body is not all there `seconds` after the app first asked for it."""

    def __init__(self, app: Any, limit: int, seconds: float = 30) -> None:
        self.app = app
        self.limit = limit
        self.seconds = seconds

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
        deadline: float | None = None
        done = (
            False  # the body is in: later receives (disconnect watchers) wait as long as they like
        )

        async def counted() -> Any:
            nonlocal seen, deadline, done
            if done:
                return await receive()
            now = asyncio.get_running_loop().time()
            deadline = now + self.seconds if deadline is None else deadline
            try:
                async with asyncio.timeout(max(0.0, deadline - now)):
                    message = await receive()
            except TimeoutError:
                raise _Refused(
                    RequestTimeout(
                        f"the request body did not arrive within {self.seconds:g} s",
                        code="body_timeout",
                    )
                ) from None
            done = message["type"] != "http.request" or not message.get("more_body")
            seen += len(message.get("body", b""))
            if seen > self.limit:
                raise _Refused(too_large)
            return message

        started = False

        async def tracked(message: Any) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, tracked)
        except _Refused as refused:
            if started:  # the app answered already and read on: nothing more to say
                return
            await send_error(send, refused.error)
