"""A fast fake OpenAI upstream for benchmarks: aiohttp.web answering a fixed chat.completion.

    python -m bench.upstream [--host 127.0.0.1] [--port 0] [--port-file FILE]

Answers POST /v1/chat/completions with a fixed ~400-byte JSON body (it reads the request body but
does not parse it) and GET /health with 200. With --port 0 it binds a free port; the bound port is
printed on stdout and, with --port-file, written to FILE once the server is accepting connections.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys

import orjson
import uvloop
from aiohttp import web

COMPLETION = orjson.dumps(
    {
        "id": "chatcmpl-bench000000000000000000000001",
        "object": "chat.completion",
        "created": 1764460800,
        "model": "bench-model",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "Hello! This is a fixed benchmark reply from the fake upstream.",
                },
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 212, "completion_tokens": 14, "total_tokens": 226},
        "system_fingerprint": "fp_bench",
    }
)


async def chat(request: web.Request) -> web.Response:
    await request.read()
    return web.Response(body=COMPLETION, content_type="application/json")


async def health(request: web.Request) -> web.Response:
    return web.Response(body=b'{"status":"ok"}', content_type="application/json")


def make_app() -> web.Application:
    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_get("/health", health)
    return app


def _write_port_file(path: str, port: int) -> None:
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        f.write(str(port))
    os.replace(tmp, path)  # atomic: the reader never sees a partial number


async def serve_app(
    app: web.Application, host: str, port: int, port_file: str | None, banner: str
) -> None:
    """Serve `app` until SIGINT/SIGTERM; print `banner` (with {url}) and write the port file."""
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    bound = runner.addresses[0][1]
    print(banner.format(url=f"http://{host}:{bound}"), flush=True)
    if port_file:
        _write_port_file(port_file, bound)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()


async def serve(host: str, port: int, port_file: str | None) -> None:
    await serve_app(make_app(), host, port, port_file, "upstream listening on {url}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (default)")
    parser.add_argument("--port-file", help="write the bound port here once listening")
    args = parser.parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        uvloop.run(serve(args.host, args.port, args.port_file))
    sys.exit(0)


if __name__ == "__main__":
    main()
