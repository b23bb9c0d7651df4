"""The provider seam: one class per wire protocol, a vendor is a config row.

A provider turns an OpenAI-shaped chat request into one upstream call and hands back
OpenAI-shaped bytes. It raises only nerve.errors.UpstreamError subclasses: transport errors
(aiohttp, timeouts) are translated in one place, `TransportErrors`, which every upstream read
and write goes through; bad JSON in `parse_json`. To add a protocol, subclass Provider,
implement `complete` and `open_stream`, and register the class in `providers.PROTOCOLS`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, TypeVar

import aiohttp
import orjson

from nerve.config import ProviderConfig
from nerve.errors import UpstreamConnection, UpstreamError, UpstreamStatus, UpstreamTimeout
from nerve.gateway.providers.sse import SSEEvent, SSEParser
from nerve.gateway.resilience.cooldown import parse_retry_after
from nerve.gateway.stats import Usage
from nerve.telemetry import active

__all__ = [
    "Completion",
    "Provider",
    "Stream",
    "TransportErrors",
    "error_message",
    "parse_json",
    "sse_events",
    "transport_errors",
]

T = TypeVar("T")


@dataclass(slots=True)
class Completion:
    """A finished answer: OpenAI `chat.completion` JSON bytes, and the usage read from them."""

    body: bytes
    usage: Usage | None


@dataclass(slots=True)
class Stream:
    """An upstream stream whose first frame already arrived, so failing over was still possible.

    `first` then `rest` are OpenAI SSE frames (`data: ...\\n\\n`), ending with `data: [DONE]`;
    `rest` raises UpstreamError if the upstream fails midway. `usage` fills in as soon as the
    upstream reports it. `close` releases the connection (`release`, the transport's own: the
    HTTP client stays behind the provider seam); it is safe to call twice.
    """

    first: bytes
    rest: AsyncGenerator[bytes, None]
    release: Callable[[], None]
    usage: list[Usage] = field(default_factory=list)

    async def close(self) -> None:
        try:
            await self.rest.aclose()
        finally:
            self.release()

    @classmethod
    async def start(
        cls,
        frames: AsyncGenerator[bytes, None],
        release: Callable[[], None],
        usage: list[Usage],
    ) -> Stream:
        """Wait for the first frame; on any failure release everything and re-raise."""
        try:
            first = await anext(frames)
        except StopAsyncIteration:
            await frames.aclose()
            release()
            raise UpstreamError(
                "upstream stream ended before any data", code="upstream_stream_cut"
            ) from None
        except BaseException:
            await frames.aclose()
            release()
            raise
        return cls(first, frames, release, usage)


class Provider(ABC):
    def __init__(self, config: ProviderConfig, session: aiohttp.ClientSession) -> None:
        self.config = config
        self.name = config.name
        self.session = session
        self.transport_errors = TransportErrors(self.name)
        self.headers: dict[str, str] = {}
        self.timeout = aiohttp.ClientTimeout(
            total=config.timeout_seconds, connect=config.connect_timeout_seconds
        )
        # A stream may run long; only the wait between two reads is bounded.
        self.stream_timeout = aiohttp.ClientTimeout(
            total=None,
            connect=config.connect_timeout_seconds,
            sock_read=config.timeout_seconds,
        )

    @property
    def missing_key(self) -> bool:
        return self.config.missing_key

    @abstractmethod
    async def complete(self, body: dict[str, Any], model: str) -> Completion: ...

    @abstractmethod
    async def open_stream(self, body: dict[str, Any], model: str) -> Stream: ...

    models_url: str = ""  # the cheapest call the provider answers: its model list (probes)

    async def probe(self) -> None:
        """GET the model list; raise an UpstreamError unless it answers 2xx."""
        with self.transport_errors:
            async with self.session.get(
                self.models_url, headers=self.headers, timeout=self.timeout
            ) as response:
                raw = await response.read()
                if response.status >= 300:
                    raise _status_error(self.name, response, raw)

    async def _post(
        self, url: str, payload: dict[str, Any], headers: dict[str, str], *, stream: bool
    ) -> aiohttp.ClientResponse:
        """POST and return a 2xx response still open for reading, or raise an UpstreamError."""
        if active.tracing is not None:  # SPEC OB-1: the attempt's traceparent goes upstream
            headers = active.tracing.outgoing(headers, payload)
        with self.transport_errors:
            response = await self.session.post(
                url,
                data=orjson.dumps(payload),
                headers=headers,
                timeout=self.stream_timeout if stream else self.timeout,
            )
            if response.status >= 300:
                async with response:
                    raise _status_error(self.name, response, await response.read())
        return response

    async def _fetch(self, url: str, payload: dict[str, Any], headers: dict[str, str]) -> bytes:
        """POST and return the whole 2xx body (one coroutine: this is the hot path)."""
        if active.tracing is not None:  # SPEC OB-1: the attempt's traceparent goes upstream
            headers = active.tracing.outgoing(headers, payload)
        with self.transport_errors:
            async with self.session.post(
                url, data=orjson.dumps(payload), headers=headers, timeout=self.timeout
            ) as response:
                raw = await response.read()
                if response.status >= 300:
                    raise _status_error(self.name, response, raw)
                return raw


def parse_json(provider: str, data: str | bytes, what: str) -> Any:
    """Upstream JSON, or an UpstreamError saying the upstream `what` invalid JSON."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        raise UpstreamError(f"{provider}: {what} invalid JSON", code="upstream_bad_json") from None


async def sse_events(
    provider: str, response: aiohttp.ClientResponse, end: str
) -> AsyncGenerator[SSEEvent, None]:
    """The events of a streamed response as they arrive; a stream cut before `end` raises."""
    parser, errors = SSEParser(), TransportErrors(provider)
    while True:
        with errors:
            data = await response.content.readany()
        if not data:
            raise UpstreamError(
                f"{provider}: stream ended before {end}", code="upstream_stream_cut"
            )
        for event in parser.feed(data):
            yield event


def _status_error(provider: str, response: aiohttp.ClientResponse, raw: bytes) -> UpstreamStatus:
    return UpstreamStatus(
        response.status,
        f"{provider}: {error_message(raw) or response.reason}",
        retry_after=parse_retry_after(response.headers.get("retry-after")),
        body=raw,
    )


class TransportErrors:
    """The one place where aiohttp failures and timeouts become UpstreamErrors.

    `with TransportErrors(provider):` around any upstream read or write: aiohttp's
    ServerTimeoutError and a bare TimeoutError become UpstreamTimeout, a ClientConnectionError
    UpstreamConnection, any other ClientError a plain UpstreamError (`upstream_error`); the
    original stays the `__cause__`. Anything else (an UpstreamStatus, a cancellation) passes
    through. A plain context manager holding only the name, so one instance is reusable, and
    it costs no generator on the hot path.
    """

    __slots__ = ("provider",)

    def __init__(self, provider: str) -> None:
        self.provider = provider

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        # ClientError first: aiohttp's ServerTimeoutError is a TimeoutError too.
        if isinstance(error, aiohttp.ClientError):
            raise _transport_error(self.provider, error) from error
        if isinstance(error, TimeoutError):
            raise UpstreamTimeout(f"{self.provider}: upstream timed out") from error


def _transport_error(provider: str, e: aiohttp.ClientError) -> UpstreamError:
    if isinstance(e, aiohttp.ServerTimeoutError):
        return UpstreamTimeout(f"{provider}: upstream timed out")
    if isinstance(e, aiohttp.ClientConnectionError):
        return UpstreamConnection(f"{provider}: {str(e) or type(e).__name__}")
    return UpstreamError(f"{provider}: {str(e) or type(e).__name__}", code="upstream_error")


async def transport_errors(provider: str, awaitable: Awaitable[T]) -> T:
    """Await an aiohttp operation, translating its failures (through TransportErrors)."""
    with TransportErrors(provider):
        return await awaitable


def error_message(raw: bytes) -> str:
    """The human message inside an OpenAI or Anthropic error body, else the body's start."""
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return raw[:200].decode("utf-8", "replace").strip()
    if isinstance(data, dict):
        err = data.get("error")
        message = err.get("message") if isinstance(err, dict) else None
        if isinstance(message, str):
            return message
        if isinstance(err, str):
            return err
    return raw[:200].decode("utf-8", "replace").strip()
