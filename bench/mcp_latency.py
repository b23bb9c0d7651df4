"""MCP tool-call latency over each transport, with the SDK's own client, on this machine.

    python bench/mcp_latency.py [--runs 5] [--calls 200]

(Not bench/mcp.py: run as a script, that name would shadow the `mcp` SDK.)

Two tools: `check_safety` (cheap: a shell command judged by the rules, microseconds of work) and
`recall_memory` (a text query over 500 stored memories of one user). Transports: the Python API
called directly (no MCP: the floor), `mcp.Client(server)` in process, `nerve mcp` over stdio (a
subprocess), and `nerve serve` over streamable HTTP at /mcp (a subprocess, uvloop + httptools),
with `POST /api/safety/check` on the same server as the REST reference. One client calls
sequentially; each run is --calls calls after a warm-up; the table shows the median over --runs
of each run's p50 and p95. Each server gets a directory (and SQLite database) of its own under
a temporary directory; nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client, StdioServerParameters

from nerve.config import load_config
from nerve.server import build_app

SAFETY = {"kind": "shell", "content": "ls -la /tmp | grep log"}
RECALL = {"user_id": "bench", "query": "pagination cache timeout"}
WORDS = ["login", "auth", "token", "pagination", "users", "cache", "redis", "deploy", "docker",
         "error", "timeout", "retry"]  # fmt: skip
CONFIG = (
    "probes: {interval_seconds: 0}\nlimits: {rate: {window_requests: 1000000, burst: 100000}}\n"
)
Call = Callable[[], Awaitable[Any]]


def quantiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return ordered[len(ordered) // 2] * 1000, ordered[int(len(ordered) * 0.95) - 1] * 1000


async def measure(call: Call, runs: int, calls: int) -> tuple[float, float]:
    for _ in range(max(20, calls // 10)):
        await call()
    p50s, p95s = [], []
    for _ in range(runs):
        samples = []
        for _ in range(calls):
            started = time.perf_counter()
            await call()
            samples.append(time.perf_counter() - started)
        p50, p95 = quantiles(samples)
        p50s.append(p50)
        p95s.append(p95)
    return statistics.median(p50s), statistics.median(p95s)


def tool(client: Client, name: str, arguments: dict[str, Any]) -> Call:
    async def call() -> Any:
        result = await client.call_tool(name, arguments)
        if result.is_error:
            raise RuntimeError(f"{name} failed: {result.content}")
        return result

    return call


async def fill(client: Client) -> None:
    for i in range(500):
        text = " ".join(WORDS[(i * 7 + k) % len(WORDS)] for k in range(6))
        await client.call_tool("store_memory", {
            "user_id": "bench", "intent": "note", "tier": "episodic",
            "data": {"text": f"{text} #{i}"}, "importance_score": 0.9})  # fmt: skip


def workdir(root: Path, name: str) -> Path:
    path = root / name
    path.mkdir()
    (path / "nerve.yaml").write_text(CONFIG)
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.asynccontextmanager
async def served(directory: Path) -> AsyncIterator[str]:
    port = free_port()
    command = [sys.executable, "-m", "nerve", "serve", "--config", "nerve.yaml", "--port",
               str(port), "--log-level", "warning"]  # fmt: skip
    environ = os.environ | {"NERVE_ADMIN_PASSWORD": "bench"}
    process = await asyncio.create_subprocess_exec(
        *command, cwd=directory, env=environ, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    try:
        async with httpx2.AsyncClient() as http:
            for _ in range(300):
                with contextlib.suppress(httpx2.TransportError):
                    if (await http.get(f"{url}/health")).status_code == 200:
                        break
                await asyncio.sleep(0.05)  # polling a subprocess's start-up, not timing a test
            else:
                raise RuntimeError("nerve serve did not start")
        yield url
    finally:
        process.terminate()
        await process.wait()


async def bench(runs: int, calls: int) -> list[tuple[str, str, float, float]]:
    rows: list[tuple[str, str, float, float]] = []

    async def both(transport: str, client: Client) -> None:
        await fill(client)
        for name, arguments in (("check_safety", SAFETY), ("recall_memory", RECALL)):
            rows.append(
                (transport, name, *await measure(tool(client, name, arguments), runs, calls))
            )

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        here = workdir(root, "in-process")
        os.chdir(here)
        os.environ["NERVE_ADMIN_PASSWORD"] = "bench"
        app = build_app(load_config(str(here / "nerve.yaml")))
        async with app.api.router.lifespan_context(app.api):
            async with Client(app.mcp) as client:
                await both("in-process (mcp.Client)", client)
            safety = app.pipeline.safety
            memory = app.memory
            direct: dict[str, Call] = {
                "check_safety": lambda: safety.check("shell", SAFETY["content"]),
                "recall_memory": lambda: memory.recall("bench", query=RECALL["query"]),
            }
            for i, (name, call) in enumerate(direct.items()):
                rows.insert(i, ("python API (no MCP)", name, *await measure(call, runs, calls)))
        stdio = workdir(root, "stdio")
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "nerve", "mcp", "--config", "nerve.yaml"],
            env={"NERVE_ADMIN_PASSWORD": "bench"}, cwd=stdio,
        )  # fmt: skip
        async with Client(params) as client:
            await both("stdio (nerve mcp)", client)
        async with served(workdir(root, "http")) as url:
            async with Client(f"{url}/mcp") as client:
                await both("streamable HTTP (/mcp)", client)
            async with httpx2.AsyncClient(base_url=url) as http:

                async def rest() -> Any:
                    return (await http.post("/api/safety/check", json=SAFETY)).raise_for_status()

                rows.append(
                    ("REST /api/safety/check", "check_safety", *await measure(rest, runs, calls))
                )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    rows = asyncio.run(bench(args.runs, args.calls))
    runs = f"median of {args.runs} runs x {args.calls} calls"
    print(f"\nMCP tool-call latency, one sequential client; {runs}\n")
    print("| transport | tool | p50 ms | p95 ms |")
    print("|---|---|---:|---:|")
    for transport, name, p50, p95 in rows:
        print(f"| {transport} | {name} | {p50:.3f} | {p95:.3f} |")


if __name__ == "__main__":
    main()
