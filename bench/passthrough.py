"""The reference "bare aiohttp pass-through proxy" that nerve's speed target is measured against.

    python -m bench.passthrough --upstream http://127.0.0.1:PORT/v1/chat/completions
        [--host 127.0.0.1] [--port 0] [--port-file FILE] [--model bench-model]

aiohttp.web server with one shared aiohttp.ClientSession (default connector). For each
POST /v1/chat/completions it reads the body, parses it with orjson, replaces "model", dumps it
with orjson, POSTs it to --upstream, reads the whole response and returns it as
application/json with the upstream's status. Nothing else: no auth, routing, limits, logging or
usage accounting; that is what makes it the ceiling for a Python gateway. It runs on uvloop,
like `nerve serve`. GET /health answers 200. With --port 0 it binds a free port, prints it and,
with --port-file, writes it to FILE once accepting connections (as bench/upstream.py does).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import AsyncIterator

import aiohttp
import orjson
import uvloop
from aiohttp import web
from upstream import serve_app  # bench/ is on sys.path: run as a script

SESSION = web.AppKey("session", aiohttp.ClientSession)


def make_app(upstream: str, model: str) -> web.Application:
    app = web.Application()
    headers = {"Content-Type": "application/json"}

    async def chat(request: web.Request) -> web.Response:
        payload = orjson.loads(await request.read())
        payload["model"] = model
        body = orjson.dumps(payload)
        async with request.app[SESSION].post(upstream, data=body, headers=headers) as upstream_r:
            data = await upstream_r.read()
            return web.Response(
                body=data, status=upstream_r.status, content_type="application/json"
            )

    async def health(request: web.Request) -> web.Response:
        return web.Response(body=b'{"status":"ok"}', content_type="application/json")

    async def client_session(app: web.Application) -> AsyncIterator[None]:
        app[SESSION] = aiohttp.ClientSession()
        yield
        await app[SESSION].close()

    app.cleanup_ctx.append(client_session)
    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_get("/health", health)
    return app


async def serve(host: str, port: int, port_file: str | None, upstream: str, model: str) -> None:
    await serve_app(
        make_app(upstream, model), host, port, port_file, f"pass-through on {{url}} -> {upstream}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--upstream", required=True, help="full chat completions URL to forward to")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (default)")
    parser.add_argument("--port-file", help="write the bound port here once listening")
    parser.add_argument("--model", default="bench-model", help="model name sent upstream")
    args = parser.parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        uvloop.run(serve(args.host, args.port, args.port_file, args.upstream, args.model))
    sys.exit(0)


if __name__ == "__main__":
    main()
