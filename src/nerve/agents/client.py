"""One call to one agent over HTTP: POST {"task", "payload"} as JSON, get JSON back.

Bounded every way an endpoint could misbehave: a timeout for the whole call (redirects
included), an answer capped at `max_response_bytes`, redirects never followed to another host
(same scheme, host and port only, at most a few), and the SSRF guard on every hop and every
connection. Retries with exponential backoff happen only for idempotent tasks: a task that
sends a message must not be sent twice because an answer was lost.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urljoin, urlsplit

import aiohttp
import orjson

from nerve import __version__
from nerve.agents.guard import Guard, GuardedResolver, Refused
from nerve.errors import AgentCallFailed

__all__ = ["AgentClient"]

MAX_REDIRECTS = 3


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or ""), parts.port or {"http": 80, "https": 443}.get(scheme)


class AgentClient:
    def __init__(
        self,
        guard: Guard,
        *,
        timeout_seconds: float = 10.0,
        retries: int = 2,
        max_response_bytes: int = 1 << 20,
        backoff_seconds: float = 0.2,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> None:
        self.guard = guard
        self.timeout_seconds = timeout_seconds
        self.retries = retries
        self.max_response_bytes = max_response_bytes
        self.backoff_seconds = backoff_seconds
        self._sleep = sleep
        self._session: aiohttp.ClientSession | None = None

    async def open(self) -> None:
        if self._session is None:
            resolver = GuardedResolver(self.guard, aiohttp.ThreadedResolver())
            # No DNS cache: the guard sees every resolution. No proxies from the environment
            # (trust_env=False): a proxy would hide where the request really goes.
            connector = aiohttp.TCPConnector(resolver=resolver, use_dns_cache=False, limit=100)
            self._session = aiohttp.ClientSession(connector=connector, trust_env=False)

    async def close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    async def call(self, endpoint: str, body: bytes, *, idempotent: bool) -> Any:
        """POST `body` (JSON) to `endpoint`: the agent's JSON answer, or AgentCallFailed with a
        clear message."""
        attempts = 1 + (self.retries if idempotent else 0)
        for attempt in range(attempts):
            if attempt:
                await self._sleep(self.backoff_seconds * 2 ** (attempt - 1))
            try:
                return await self._once(endpoint, body)
            except AgentCallFailed as e:
                if not e.retryable or attempt == attempts - 1:
                    if attempts > 1 and e.retryable:
                        raise AgentCallFailed(
                            f"{e} (after {attempts} attempts)", retryable=True
                        ) from e
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    async def _once(self, url: str, body: bytes) -> Any:
        if self._session is None:
            raise RuntimeError("the agent client is not open")
        try:
            async with asyncio.timeout(self.timeout_seconds):
                for _ in range(MAX_REDIRECTS + 1):
                    self.guard.check(url)
                    async with self._session.post(
                        url,
                        data=body,
                        headers={"content-type": "application/json",
                                 "user-agent": f"nerve/{__version__}"},
                        allow_redirects=False,
                    ) as response:  # fmt: skip
                        location = response.headers.get("location")
                        if 300 <= response.status < 400 and location:
                            url = self._redirect(url, location)
                            continue
                        return await self._answer(response)
                raise AgentCallFailed(f"more than {MAX_REDIRECTS} redirects", retryable=False)
        except TimeoutError:
            raise AgentCallFailed(
                f"timed out after {self.timeout_seconds:g}s", retryable=True
            ) from None
        except Refused as e:
            raise AgentCallFailed(f"endpoint refused: {e}", retryable=False) from None
        except aiohttp.ClientError as e:
            raise AgentCallFailed(f"unreachable: {e or type(e).__name__}", retryable=True) from None

    @staticmethod
    def _redirect(url: str, location: str) -> str:
        target = urljoin(url, location)
        if _origin(target) != _origin(url):
            where = urlsplit(target).hostname or target[:100]
            raise AgentCallFailed(
                f"redirected to another host ({where}); redirects are followed only on the "
                "same scheme, host and port",
                retryable=False,
            )
        return target

    async def _answer(self, response: aiohttp.ClientResponse) -> Any:
        if not 200 <= response.status < 300:
            snippet = (await response.content.read(200)).decode("utf-8", "replace").strip()
            raise AgentCallFailed(
                f"answered HTTP {response.status}" + (f": {snippet}" if snippet else ""),
                retryable=response.status >= 500 or response.status == 429,
            )
        limit = self.max_response_bytes
        too_big = AgentCallFailed(
            f"answered more than {limit} bytes (agents.max_response_bytes)", retryable=False
        )
        if (response.content_length or 0) > limit:
            raise too_big
        raw = bytearray()
        async for chunk in response.content.iter_chunked(64 * 1024):
            raw += chunk
            if len(raw) > limit:
                raise too_big
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            kind = response.headers.get("content-type", "no content-type")
            raise AgentCallFailed(
                f"answered HTTP {response.status} with a body that is not JSON ({kind})",
                retryable=False,
            ) from None
