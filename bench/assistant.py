"""The assistant core's cost per turn, on this machine, against the fake upstream (issue 7).

    python -m bench.assistant [--turns 300] [--mcp-tools 100]   # from the repository root

Latency: the same NerveApp (real gateway, real SQLite memory in a temporary directory) answers
--turns one-round turns through `Assistant.reply` (prompt assembly, memory context, history,
tool schemas, turn and event recording, the built-in tools offered) and the same number of
bare `Gateway.complete` calls; the core's added latency is the difference of the p50s. Turns
go 10 to a conversation, so history stays under the 20-turn summary threshold. Run with
memory on and off, to show what memory's reads and writes cost.

Tokens: the first request of a turn with --mcp-tools MCP-like tools (built by
`Tool.from_schema`, three described parameters each) registered beside the built-ins, sent
as full schemas (no MCP client: every registered tool is offered) versus names only in the
system prompt's hint (the MCP client lists them; AS-5 on-demand loading). Tokens are the
request's JSON characters / 4 (no tokenizer is available offline). Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from typing import Any

from tests.fakes.upstream import FakeUpstream, Reply

from nerve.assistant import Inbound
from nerve.assistant.build import assistant_from_app
from nerve.config import parse_config
from nerve.server import NerveApp, build_app
from nerve.tools import Tool, ToolContext, builtin_registry
from nerve.tools.result import Services


def config(url: str, *, memory: bool) -> Any:
    return parse_config(
        {
            "providers": [{"name": "fake", "base_url": url, "api_key": "sk-bench"}],
            "routes": [{"name": "default", "model": {"provider": "fake", "model": "m1"}}],
            "probes": {"interval_seconds": 0},
            "server": {"config_poll_seconds": 0},
            "memory": {"enabled": memory},
            "limits": {"rate": {"window_requests": 10_000_000, "burst": 1_000_000}},
        },
        environ={},
    )


def p50(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def p95(samples: list[float]) -> float:
    return sorted(samples)[int(len(samples) * 0.95) - 1] * 1000


async def timed(n: int, call: Callable[[int], Awaitable[Any]]) -> list[float]:
    for i in range(10):  # warm-up
        await call(-1 - i)
    out = []
    for i in range(n):
        start = time.perf_counter()
        await call(i)
        out.append(time.perf_counter() - start)
    return out


async def latency(upstream: FakeUpstream, turns: int, memory: bool) -> tuple[list[float], ...]:
    app: NerveApp = build_app(config(upstream.openai_base_url, memory=memory))
    async with app.api.router.lifespan_context(app.api):
        assistant = assistant_from_app(app)
        body = {"model": "auto", "messages": [{"role": "user", "content": "what is the time?"}]}

        async def direct(i: int) -> Any:
            return await app.gateway.gateway.complete(dict(body))

        async def turn(i: int) -> Any:
            out = await assistant.reply(
                Inbound("bench", f"c{i // 10}", "bench", "what is the time?")
            )
            assert out.text == "ok", out.text

        upstream.script(*[Reply(text="ok")] * (2 * turns + 40))
        return await timed(turns, direct), await timed(turns, turn)


def mcp_tools(count: int) -> list[Tool]:
    async def call(args: dict[str, Any], ctx: ToolContext) -> str:
        return "ok"

    params = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Path of the entry, relative to the root."},
            "limit": {"type": "integer", "description": "At most this many.", "default": 50},
            "recursive": {"type": "boolean", "description": "Descend into sub-folders too."},
        },
        "required": ["path"],
    }  # fmt: skip
    description = "List, read or search entries of the server's workspace; returns JSON rows."
    return [
        Tool.from_schema(f"srv{i // 10}__tool{i}", description, params, call) for i in range(count)
    ]


class Names:
    def __init__(self, names: list[str]) -> None:
        self.names = names

    def tool_names(self) -> list[str]:
        return self.names


async def tokens(upstream: FakeUpstream, count: int) -> dict[str, tuple[int, int, int]]:
    app = build_app(config(upstream.openai_base_url, memory=True))
    sizes: dict[str, tuple[int, int, int]] = {}
    async with app.api.router.lifespan_context(app.api):
        extra = mcp_tools(count)
        for way, mcp in (
            ("full schemas", None),
            ("names only (on demand)", Names([t.name for t in extra])),
        ):
            tools = builtin_registry()
            for t in extra:
                tools.register(t)
            services = Services(memory=app.memory, config=app.config, mcp=mcp)
            assistant = assistant_from_app(app, tools=tools, services=services)
            upstream.reset()
            upstream.script(Reply(text="ok"))
            await assistant.reply(Inbound("bench", way, "bench", "hello"))
            [sent] = await asyncio.to_thread(upstream.wait_for_requests, 1)
            sizes[way] = (len(sent.body.get("tools", [])), len(sent.raw), len(sent.raw) // 4)
    return sizes


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--mcp-tools", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, FakeUpstream(name="bench") as upstream:
        os.chdir(tmp)
        os.environ.setdefault("NERVE_ADMIN_PASSWORD", "bench-password")
        print(f"Latency per turn, {args.turns} turns, one model call each (ms)\n")
        print("| memory | gateway p50 | assistant p50 | added p50 | gateway p95 | assistant p95 |")
        print("|---|---|---|---|---|---|")
        for memory in (True, False):
            direct, turn = await latency(upstream, args.turns, memory)
            added = p50(turn) - p50(direct)
            print(f"| {'on' if memory else 'off'} | {p50(direct):.2f} | {p50(turn):.2f} | "
                  f"+{added:.2f} | {p95(direct):.2f} | {p95(turn):.2f} |")  # fmt: skip
        sizes = await tokens(upstream, args.mcp_tools)
        print(
            f"\nFirst request of a turn, built-in tools + {args.mcp_tools} MCP tools registered\n"
        )
        print(
            "| MCP tools sent as | tool schemas in request | request bytes | ≈ tokens (chars/4) |"
        )
        print("|---|---|---|---|")
        for way, (schemas, size, toks) in sizes.items():
            print(f"| {way} | {schemas} | {size:,} | {toks:,} |")


if __name__ == "__main__":
    asyncio.run(main())
