"""Tokens per model request with many MCP tools: full schemas vs names-only hints (AS-5).

    python bench/mcp_tools_tokens.py [--tools 100] [--use 2]

Real schemas: `nerve mcp` is spawned over stdio through the assistant's own `McpClients`, and
its 14 tools' schemas (as `Tool.openai()` renders them for the model) are repeated under
server names s01, s02, ... until there are --tools of them. The native tools are the built-ins
`ToolRegistry.discover("nerve.tools.builtin")` finds. Three ways to send them per request:

    full       native + every MCP tool as a full schema in `tools`
    names      native schemas + the MCP tool names in the system prompt (the hint line)
    on-demand  after mcp_server(action="use_tools") of --use tools: native + those schemas + the
               hint naming the others

Tokens are estimated as characters / 4 of the JSON sent, and counted with tiktoken
(cl100k_base) when it is installed and its encoding is available offline. A turn that needs
--use MCP tools costs 2 requests with full schemas (call, answer) and 3 on demand (use_tools,
call, answer): the last column compares those.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from nerve.config_sections import McpServerConfig
from nerve.mcp.client import McpClients
from nerve.tools import ToolRegistry


def counter() -> tuple[str, Any]:
    try:
        import tiktoken  # not a dependency: used when present

        encoding = tiktoken.get_encoding("cl100k_base")
    except Exception:
        return "n/a", None
    return "tiktoken", lambda text: len(encoding.encode(text))


def hint(native: list[str], others: list[str]) -> str:
    try:
        from nerve.assistant.prompt import tool_hint  # the agent's own hint line
    except ImportError:
        return "Tools: " + ", ".join(native) + ". MCP tools (use_tools first): " + ", ".join(others)
    return tool_hint(native, others)


async def nerve_schemas(workdir: Path) -> list[dict[str, Any]]:
    config = workdir / "nerve.yaml"
    config.write_text(yaml.safe_dump({
        "providers": [{"name": "p", "protocol": "openai",
                       "base_url": "http://127.0.0.1:9/v1", "api_key": "sk-unused"}],
        "routes": [{"name": "default", "model": {"provider": "p", "model": "m"}}],
        "probes": {"interval_seconds": 0},
    }))  # fmt: skip
    server = McpServerConfig(
        name="nerve", command=str(Path(sys.executable).parent / "nerve"),
        args=["mcp", "--config", str(config)], env={"NERVE_ADMIN_PASSWORD": "bench"},
    )  # fmt: skip
    with (workdir / "stderr.log").open("w") as errlog:
        clients = McpClients([server], cwd=workdir, errlog=errlog)
        await clients.start(wait=60)
        try:
            tools = clients.tools(clients.tool_names().get("nerve", []))
        finally:
            await clients.stop()
    if not tools:
        raise SystemExit("nerve mcp did not start; see " + str(workdir / "stderr.log"))
    return [t.openai() for t in tools]


def replicate(schemas: list[dict[str, Any]], count: int) -> list[dict[str, Any]]:
    out = []
    for i in range(count):
        base = json.loads(json.dumps(schemas[i % len(schemas)]))
        tool = base["function"]["name"].split("__", 1)[1]
        base["function"]["name"] = f"s{i // len(schemas) + 1:02d}__{tool}"
        out.append(base)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tools", type=int, default=100)
    parser.add_argument("--use", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        mcp = replicate(asyncio.run(nerve_schemas(Path(tmp))), args.tools)
    registry = ToolRegistry()
    registry.discover("nerve.tools.builtin")
    native = registry.schemas("openai")
    native_names = registry.names()
    mcp_names = [s["function"]["name"] for s in mcp]
    used = mcp[: args.use]
    ways = {
        "full": (native + mcp, hint(native_names, [])),
        "names": (native, hint(native_names, mcp_names)),
        "on-demand": (native + used, hint(native_names, mcp_names[args.use :])),
    }
    name, count = counter()
    sizes = {}
    for way, (schemas, line) in ways.items():
        text = json.dumps(schemas) + line
        sizes[way] = (len(text), len(text) / 4, count(text) if count else None)
    full_turn = 2 * sizes["full"][1]
    lazy_turn = sizes["names"][1] + 2 * sizes["on-demand"][1]
    print(f"{len(native)} native tools, {args.tools} MCP tools, use_tools of {args.use}\n")
    print(f"| way | schemas | chars | est. tokens (chars/4) | {name} tokens | vs full |")
    print("|---|---|---|---|---|---|")
    for way, (schemas, _) in ways.items():
        chars, est, real = sizes[way]
        ratio = est / sizes["full"][1]
        print(f"| {way} | {len(schemas)} | {chars:,} | {est:,.0f} | "
              f"{real if real is not None else '-'} | {ratio:.1%} |")  # fmt: skip
    print(f"\nA turn using {args.use} MCP tools: full schemas, 2 requests = {full_turn:,.0f} est. "
          f"tokens; on demand, 3 requests (use_tools, call, answer) = {lazy_turn:,.0f} "
          f"({lazy_turn / full_turn:.1%}).")  # fmt: skip


if __name__ == "__main__":
    main()
