"""A low-overhead HTTP/1.1 load generator for benchmarks.

    python -m bench.loadgen URL [--concurrency 8] [--seconds 3] [--warmup 0.5] [--api-key KEY]
        [--client raw|aiohttp] [--body-file FILE] [--header 'Name: value' ...]

Runs CONCURRENCY closed loops (send, wait for the whole response, send again) of POSTs of a
prebuilt ~1 KB chat request over keep-alive connections, for SECONDS after WARMUP, on uvloop.
--client raw (default) writes the prebuilt request bytes straight to an asyncio transport and
parses responses with httptools (Content-Length or chunked); measured here, that drives a fast
upstream ~2x harder than an aiohttp client does. --client aiohttp uses one aiohttp.ClientSession
(TCPConnector(limit=CONCURRENCY)), the kind of client the speed references in NOTES.md were
measured with; its own per-request cost caps the direct rate, which makes every proxy's ratio to
direct look better. --body-file posts that file's bytes instead of the chat request (e.g. an
Anthropic Messages or Responses body), --header adds request headers. Prints one JSON object:
client, rps, p50_ms, p99_ms, ok, errors, first_error.
A response other than 200 counts as an error and its latency is left out.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import httptools
import orjson
import uvloop

SYSTEM_PROMPT = (
    "You are a concise assistant for a software team. Answer questions about code, "
    "infrastructure and APIs accurately; say so when you are unsure, and prefer short, "
    "concrete examples over long explanations."
)
USER_PROMPT = (
    "Our API gateway forwards chat requests to an upstream model provider. Explain in two short "
    "paragraphs how HTTP keep-alive connection pooling reduces request latency in that setup, "
    "what a sensible pool size is for a single worker handling a few hundred requests per second, "
    "and name one pitfall, such as stale connections closed by the provider's load balancer, "
    "together with how to detect and retry it safely without duplicating a non-idempotent call. "
    "Keep the answer under 200 words and do not use bullet points."
)


def chat_request_body(model: str = "auto") -> bytes:
    """A realistic ~1 KB OpenAI chat request."""
    return orjson.dumps(
        {
            "model": model,
            "messages": [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": "Hi! I have a question about our gateway."},
                {"role": "assistant", "content": "Sure, what would you like to know about it?"},
                {"role": "user", "content": USER_PROMPT},
            ],
            "temperature": 0.2,
            "max_tokens": 256,
            "user": "bench-user-0001",
        }
    )


def build_request(
    url: str, body: bytes, api_key: str | None, headers: dict[str, str] | None = None
) -> tuple[str, int, bytes]:
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        raise ValueError(f"need an http:// URL, got {url!r}")
    host, port = parts.hostname, parts.port or 80
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    head = (
        f"POST {target} HTTP/1.1\r\nHost: {host}:{port}\r\n"
        "Content-Type: application/json\r\nAccept: application/json\r\n"
        + (f"Authorization: Bearer {api_key}\r\n" if api_key else "")
        + "".join(f"{name}: {value}\r\n" for name, value in (headers or {}).items())
        + f"Content-Length: {len(body)}\r\n\r\n"
    )
    return host, port, head.encode() + body


class _Connection(asyncio.Protocol):
    """One keep-alive connection; `request` resolves to the status code of the next response."""

    def __init__(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.transport: asyncio.Transport | None = None
        self.waiter: asyncio.Future[int] | None = None
        self.closed = False

    # asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as e:
            self._resolve(e)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._resolve(exc or ConnectionError("connection closed by the server"))

    # httptools callbacks
    def on_message_complete(self) -> None:
        self._resolve(self.parser.get_status_code())
        if not self.parser.should_keep_alive():
            self.closed = True
            if self.transport is not None:
                self.transport.close()

    def _resolve(self, result: int | BaseException) -> None:
        waiter, self.waiter = self.waiter, None
        if waiter is None or waiter.done():
            return
        if isinstance(result, BaseException):
            waiter.set_exception(result)
        else:
            waiter.set_result(result)

    def request(self, data: bytes) -> asyncio.Future[int]:
        assert self.transport is not None
        self.waiter = asyncio.get_running_loop().create_future()
        self.transport.write(data)
        return self.waiter


async def _worker(
    host: str,
    port: int,
    raw: bytes,
    warm_at: float,
    stop_at: float,
    latencies: list[float],
    errors: list[str],
) -> None:
    loop = asyncio.get_running_loop()
    now = time.perf_counter
    conn: _Connection | None = None
    try:
        while True:
            if conn is None or conn.closed:
                if conn is not None and conn.transport is not None:
                    conn.transport.close()
                _, conn = await loop.create_connection(_Connection, host, port)
            t0 = now()
            if t0 >= stop_at:
                break
            try:
                status = await conn.request(raw)
            except (OSError, httptools.HttpParserError) as e:
                status, conn.closed = 0, True
                detail = repr(e)
            else:
                detail = f"HTTP {status}"
            t1 = now()
            if t0 >= warm_at:
                if status == 200:
                    latencies.append(t1 - t0)
                else:
                    errors.append(detail)
    finally:
        if conn is not None and conn.transport is not None:
            conn.transport.close()


async def _aiohttp_worker(
    session: aiohttp.ClientSession,
    url: str,
    body: bytes,
    headers: dict[str, str],
    warm_at: float,
    stop_at: float,
    latencies: list[float],
    errors: list[str],
) -> None:
    now = time.perf_counter
    while True:
        t0 = now()
        if t0 >= stop_at:
            break
        try:
            async with session.post(url, data=body, headers=headers) as response:
                await response.read()
                status = response.status
        except (OSError, aiohttp.ClientError) as e:
            status, detail = 0, repr(e)
        else:
            detail = f"HTTP {status}"
        t1 = now()
        if t0 >= warm_at:
            if status == 200:
                latencies.append(t1 - t0)
            else:
                errors.append(detail)


async def _run_aiohttp(
    url: str,
    concurrency: int,
    body: bytes,
    api_key: str | None,
    warm_at: float,
    stop_at: float,
    latencies: list[float],
    errors: list[str],
    extra: dict[str, str] | None = None,
) -> None:
    build_request(url, body, api_key)  # the same URL validation as the raw client
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    headers.update(extra or {})
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        await asyncio.gather(
            *(
                _aiohttp_worker(session, url, body, headers, warm_at, stop_at, latencies, errors)
                for _ in range(concurrency)
            )
        )


async def run(
    url: str,
    concurrency: int = 8,
    seconds: float = 3.0,
    warmup: float = 0.5,
    api_key: str | None = "sk-bench",
    body: bytes | None = None,
    client: str = "raw",
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Drive URL for warmup + seconds; statistics cover the last `seconds` only."""
    body = chat_request_body() if body is None else body
    latencies: list[float] = []
    errors: list[str] = []
    warm_at = time.perf_counter() + warmup
    stop_at = warm_at + seconds
    if client == "aiohttp":
        await _run_aiohttp(
            url, concurrency, body, api_key, warm_at, stop_at, latencies, errors, headers
        )
    elif client == "raw":
        host, port, raw = build_request(url, body, api_key, headers)
        await asyncio.gather(
            *(
                _worker(host, port, raw, warm_at, stop_at, latencies, errors)
                for _ in range(concurrency)
            )
        )
    else:
        raise ValueError(f"unknown client {client!r}; use raw or aiohttp")
    latencies.sort()
    n = len(latencies)

    def pct(q: float) -> float:
        return latencies[min(n - 1, int(n * q))] * 1000 if n else float("nan")

    return {
        "client": client,
        "rps": n / seconds,
        "p50_ms": pct(0.50),
        "p99_ms": pct(0.99),
        "ok": n,
        "errors": len(errors),
        "first_error": errors[0] if errors else None,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url", help="e.g. http://127.0.0.1:8080/v1/chat/completions")
    parser.add_argument("-c", "--concurrency", type=int, default=8)
    parser.add_argument("-s", "--seconds", type=float, default=3.0)
    parser.add_argument("--warmup", type=float, default=0.5, help="seconds not counted")
    parser.add_argument("--api-key", default="sk-bench", help="sent as a Bearer token")
    parser.add_argument(
        "--client",
        choices=("raw", "aiohttp"),
        default="raw",
        help="raw asyncio+httptools (default) or one aiohttp.ClientSession",
    )
    parser.add_argument("--body-file", help="POST this file's bytes (default: a chat request)")
    parser.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="an extra request header (repeatable)",
    )
    args = parser.parse_args(argv)
    headers = {}
    for line in args.header:
        name, sep, value = line.partition(":")
        if not sep or not name.strip():
            parser.error(f"--header needs 'NAME: VALUE', got {line!r}")
        headers[name.strip()] = value.strip()
    body = None
    if args.body_file:
        with open(args.body_file, "rb") as f:
            body = f.read()
    result = uvloop.run(
        run(
            args.url,
            args.concurrency,
            args.seconds,
            args.warmup,
            args.api_key or None,
            body=body,
            client=args.client,
            headers=headers,
        )
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
