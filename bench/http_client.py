"""Upstream HTTP client on the gateway hot path: aiohttp vs httpx2 (vs httpx). Run:

    python bench/http_client.py [--requests 1000] [--runs 3] [--concurrency 32]

A fake OpenAI upstream (aiohttp.web on uvloop) runs in a subprocess on 127.0.0.1, so the client
process measures the client only. It answers POST /v1/chat/completions with a ~1 KB
chat.completion, or, when the request asks `"stream": true`, with 50 `chat.completion.chunk`
SSE frames (chunked, one write each) ending in `data: [DONE]`. Each client is used the way the
gateway uses aiohttp (providers/base.py): one shared client with an unbounded kept-alive pool,
a ~1 KB JSON body POSTed as bytes, the answer read whole and parsed with orjson, or a stream's
bytes fed to nerve's SSEParser until [DONE]. The client process runs on uvloop like
`nerve serve` (--loop asyncio to compare).

Per client and run: sequential latency (p50, p99) over --requests calls; throughput with
--concurrency workers over --requests calls (req/s, and the client process's CPU µs per
request: the fake upstream has one core, so at high concurrency it can cap req/s while CPU/req
still shows the client's cost); sequential streams (--requests/4): time to first SSE event and
to [DONE], p50. After a warm-up, clients take turns run by run; the table shows the median over
--runs, then each client's ratio to aiohttp (>1 in a time column: slower than aiohttp).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

import aiohttp
import httpx
import httpx2
import orjson
import uvloop
from aiohttp import web

from nerve.gateway.providers.sse import SSEParser

PATH = "/v1/chat/completions"
HEADERS = {"content-type": "application/json", "authorization": "Bearer sk-bench"}
REPLY = (
    "Sure. The quickest way to find the files over 100 MB is `find . -type f -size +100M`, "
    "which walks the tree from the current directory. Add `-exec ls -lh {} +` to see sizes, "
    "or pipe through `sort -k5 -h` to order them. On a large disk, `du -ah . | sort -rh | head "
    "-n 20` gives a quick overview of the biggest entries, directories included. If you only "
    "want to search one file system, add `-xdev` so find does not cross mount points."
)
COMPLETION = orjson.dumps({
    "id": "chatcmpl-bench0000000000000000000001", "object": "chat.completion",
    "created": 1764460800, "model": "gpt-4o-mini-2024-07-18",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": REPLY, "refusal": None},
                 "logprobs": None, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 212, "completion_tokens": 118, "total_tokens": 330,
              "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
              "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                            "accepted_prediction_tokens": 0,
                                            "rejected_prediction_tokens": 0}},
    "service_tier": "default", "system_fingerprint": "fp_bench0001",
})  # fmt: skip
WORDS = REPLY.split(" ")


def chunk(i: int) -> bytes:
    delta = {"content": WORDS[i % len(WORDS)] + " "}
    return b"data: " + orjson.dumps({
        "id": "chatcmpl-bench0000000000000000000002", "object": "chat.completion.chunk",
        "created": 1764460800, "model": "gpt-4o-mini-2024-07-18",
        "system_fingerprint": "fp_bench0001",
        "choices": [{"index": 0, "delta": delta, "logprobs": None,
                     "finish_reason": "stop" if i == 49 else None}],
    }) + b"\n\n"  # fmt: skip


CHUNKS = [chunk(i) for i in range(50)] + [b"data: [DONE]\n\n"]
MESSAGES = [
    {"role": "system", "content": "You are a helpful assistant for a small engineering team. "
     "Answer concisely, prefer shell one-liners, and explain flags the first time you use them."},
    {"role": "user", "content": "How do I list processes by memory use?"},
    {"role": "assistant", "content": "Use `ps aux --sort=-%mem | head`; `-%mem` sorts by the "
     "memory column, largest first, and head keeps the first ten lines."},
    {"role": "user", "content": "Thanks. Now: how do I find all files larger than 100MB under "
     "my home directory, and show their sizes in a human-readable way, sorted?"},
]  # fmt: skip
REQUEST = orjson.dumps({"model": "gpt-4o-mini", "messages": MESSAGES, "temperature": 0.2,
                        "max_tokens": 512, "user": "bench-user-0001"})  # fmt: skip
STREAM_REQUEST = orjson.dumps({"model": "gpt-4o-mini", "messages": MESSAGES, "stream": True,
                               "stream_options": {"include_usage": True}})  # fmt: skip


# --- the fake upstream (subprocess) -------------------------------------------------------------


async def chat(request: web.Request) -> web.StreamResponse:
    body = orjson.loads(await request.read())
    if not body.get("stream"):
        return web.Response(body=COMPLETION, content_type="application/json")
    response = web.StreamResponse(headers={"content-type": "text/event-stream"})
    await response.prepare(request)
    for chunk in CHUNKS:
        await response.write(chunk)
    await response.write_eof()
    return response


def _write_port(port_file: str, port: int) -> None:
    Path(port_file + ".tmp").write_text(str(port))
    os.replace(port_file + ".tmp", port_file)  # atomic: the parent never reads half a number


async def serve(port_file: str) -> None:
    app = web.Application()
    app.router.add_post(PATH, chat)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    _write_port(port_file, runner.addresses[0][1])
    await asyncio.Event().wait()  # until the parent terminates us


@contextlib.contextmanager
def upstream() -> Any:
    with tempfile.TemporaryDirectory() as tmp:
        port_file = str(Path(tmp) / "port")
        command = [sys.executable, os.path.abspath(__file__), "--serve", port_file]
        process = subprocess.Popen(command)
        try:
            for _ in range(200):
                if os.path.exists(port_file):
                    break
                time.sleep(0.05)  # waiting for a subprocess to bind, not timing anything
            else:
                raise RuntimeError("the fake upstream did not start")
            yield f"http://127.0.0.1:{Path(port_file).read_text()}{PATH}"
        finally:
            process.terminate()
            process.wait(5)


# --- the clients, used as the gateway uses aiohttp --------------------------------------------


class Client(Protocol):
    async def fetch(self) -> Any: ...
    async def stream(self) -> tuple[float, float]: ...
    async def aclose(self) -> None: ...


def _check_stream(events: int, last: str) -> None:
    if events != len(CHUNKS) or last != "[DONE]":
        raise RuntimeError(f"bad stream: {events} events, last {last!r}")


class Aiohttp:
    def __init__(self, url: str) -> None:
        self.url = url
        connector = aiohttp.TCPConnector(limit=0, ttl_dns_cache=300, keepalive_timeout=30)
        self.session = aiohttp.ClientSession(connector=connector, auto_decompress=True)
        self.timeout = aiohttp.ClientTimeout(total=60, connect=10)
        self.stream_timeout = aiohttp.ClientTimeout(total=None, connect=10, sock_read=60)

    async def fetch(self) -> Any:
        async with self.session.post(
            self.url, data=REQUEST, headers=HEADERS, timeout=self.timeout
        ) as response:
            raw = await response.read()
            if response.status >= 300:
                raise RuntimeError(f"status {response.status}")
        return orjson.loads(raw)

    async def stream(self) -> tuple[float, float]:
        started = time.perf_counter()
        first, events, last, parser = 0.0, 0, "", SSEParser()
        async with self.session.post(
            self.url, data=STREAM_REQUEST, headers=HEADERS, timeout=self.stream_timeout
        ) as response:
            while data := await response.content.readany():
                for event in parser.feed(data):
                    if not events:
                        first = time.perf_counter() - started
                    events, last = events + 1, event.data
        _check_stream(events, last)
        return first, time.perf_counter() - started

    async def aclose(self) -> None:
        await self.session.close()


class Httpx:
    """httpx2 or httpx (same API); a pool as unbounded and as long-lived as the gateway's."""

    def __init__(self, url: str, module: Any) -> None:
        self.url = url
        limits = module.Limits(max_connections=None, max_keepalive_connections=None,
                               keepalive_expiry=30)  # fmt: skip
        timeout = module.Timeout(60, connect=10)
        self.client = module.AsyncClient(limits=limits, timeout=timeout, trust_env=False)

    async def fetch(self) -> Any:
        response = await self.client.post(self.url, content=REQUEST, headers=HEADERS)
        if response.status_code >= 300:
            raise RuntimeError(f"status {response.status_code}")
        return orjson.loads(response.content)

    async def stream(self) -> tuple[float, float]:
        started = time.perf_counter()
        first, events, last, parser = 0.0, 0, "", SSEParser()
        async with self.client.stream(
            "POST", self.url, content=STREAM_REQUEST, headers=HEADERS
        ) as response:
            async for data in response.aiter_bytes():
                for event in parser.feed(data):
                    if not events:
                        first = time.perf_counter() - started
                    events, last = events + 1, event.data
        _check_stream(events, last)
        return first, time.perf_counter() - started

    async def aclose(self) -> None:
        await self.client.aclose()


FACTORIES: dict[str, Callable[[str], Client]] = {
    "aiohttp": Aiohttp,
    "httpx2": lambda url: Httpx(url, httpx2),
    "httpx": lambda url: Httpx(url, httpx),
}
VERSIONS = {"aiohttp": aiohttp.__version__, "httpx2": httpx2.__version__,
            "httpx": httpx.__version__}  # fmt: skip


# --- measuring ---------------------------------------------------------------------------------


def quantile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] * 1e6


async def sequential(call: Callable[[], Awaitable[Any]], n: int) -> list[float]:
    samples = []
    for _ in range(n):
        started = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - started)
    return samples


async def concurrent(client: Client, n: int, concurrency: int) -> tuple[float, float]:
    """n calls spread over `concurrency` workers: (req/s, client CPU µs per request)."""
    left = [n]

    async def worker() -> None:
        while left[0] > 0:
            left[0] -= 1
            await client.fetch()

    cpu, started = time.process_time(), time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    return n / wall, cpu / n * 1e6


async def one_run(client: Client, args: argparse.Namespace) -> dict[str, float]:
    latency = await sequential(client.fetch, args.requests)
    rps, cpu = await concurrent(client, args.requests, args.concurrency)
    streams = []
    for _ in range(max(20, args.requests // 4)):
        streams.append(await client.stream())
    return {
        "p50": quantile(latency, 0.5), "p99": quantile(latency, 0.99), "rps": rps, "cpu": cpu,
        "ttfc": quantile([s[0] for s in streams], 0.5),
        "stream": quantile([s[1] for s in streams], 0.5),
    }  # fmt: skip


async def bench(url: str, args: argparse.Namespace) -> dict[str, dict[str, float]]:
    clients = {name: FACTORIES[name](url) for name in args.clients}
    try:
        for client in clients.values():  # warm-up: open the pool, fill caches
            await sequential(client.fetch, 200)
            await concurrent(client, 4 * args.concurrency, args.concurrency)
            await sequential(client.stream, 20)
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in clients}
        for _ in range(args.runs):
            for name, client in clients.items():  # take turns: drift hits every client alike
                runs[name].append(await one_run(client, args))
    finally:
        for client in clients.values():
            await client.aclose()
    return {
        name: {key: statistics.median(r[key] for r in results) for key in results[0]}
        for name, results in runs.items()
    }


COLUMNS = [("p50", "seq p50 µs", "{:.0f}"), ("p99", "seq p99 µs", "{:.0f}"),
           ("rps", "c{c} req/s", "{:.0f}"), ("cpu", "c{c} CPU µs/req", "{:.0f}"),
           ("ttfc", "stream 1st µs", "{:.0f}"), ("stream", "stream all µs", "{:.0f}")]  # fmt: skip


def table(results: dict[str, dict[str, float]], concurrency: int) -> str:
    heads = ["client"] + [head.format(c=concurrency) for _, head, _ in COLUMNS]
    rows = [
        [f"{name} {VERSIONS[name]}"] + [fmt.format(r[key]) for key, _, fmt in COLUMNS]
        for name, r in results.items()
    ]
    base = results.get("aiohttp")
    if base:
        for name, r in results.items():
            if name != "aiohttp":
                ratios = [f"{r[key] / base[key]:.2f}x" for key, _, _ in COLUMNS]
                rows.append([f"{name}/aiohttp", *ratios])
    widths = [max(len(row[i]) for row in [heads, *rows]) for i in range(len(heads))]

    def line(row: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in
                         enumerate(zip(row, widths, strict=True)))  # fmt: skip

    return "\n".join([line(heads), line(["-" * w for w in widths]), *map(line, rows)])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=1000,
                        help="calls per phase and run (streams: a quarter)")  # fmt: skip
    parser.add_argument("--runs", type=int, default=3, help="runs per client; medians shown")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--clients", nargs="+", choices=list(FACTORIES), default=list(FACTORIES))
    parser.add_argument("--loop", choices=["uvloop", "asyncio"], default="uvloop",
                        help="client event loop (the upstream runs uvloop)")  # fmt: skip
    parser.add_argument("--serve", metavar="PORT_FILE", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        with contextlib.suppress(KeyboardInterrupt):
            uvloop.run(serve(args.serve))
        return
    started = time.perf_counter()
    with upstream() as url:
        run = uvloop.run if args.loop == "uvloop" else asyncio.run
        results = run(bench(url, args))
    print(f"python {sys.version.split()[0]}, {args.loop}, {os.cpu_count()} cores, fake upstream in "
          f"a subprocess; {args.requests} requests/phase, {args.runs} runs, medians")  # fmt: skip
    print(table(results, args.concurrency))
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
