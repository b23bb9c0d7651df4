"""`nerve mcp`: nerve's tools over MCP on stdin/stdout, for Cursor, VS Code, Claude Desktop.

The server is the same NerveApp `nerve serve` runs (gateway, memory, agents...), opened by its
own lifespan; only the transport differs. stdout carries the protocol and nothing else: logs
go to stderr, and while serving the SDK points fd 1 at stderr so stray prints miss the wire.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os

import click

from nerve.cli.base import cli, load, log_level_option, require_extras, setup_logging
from nerve.config import find_config_file

__all__ = ["mcp"]


@cli.command()
@click.option("--config", "config_path", metavar="FILE", help="Config file (YAML).")
@log_level_option("warning")
def mcp(config_path: str | None, log_level: str) -> None:
    """Serve nerve's tools over MCP (stdio): start it from an MCP host.

    Tools: process, check_safety, safe_execute, store_memory, recall_memory, record_event,
    store_fact, memory_context, register_agent, route_agent, route_model, reason,
    transcribe, synthesize. `nerve serve` serves the same tools over HTTP at /mcp.

    \b
    An MCP host's config (Cursor .cursor/mcp.json, Claude Desktop):
      {"mcpServers": {"nerve": {"command": "nerve",
                                "args": ["mcp", "--config", "/path/nerve.yaml"]}}}
    Try it by hand:
      npx @modelcontextprotocol/inspector -- nerve mcp --config nerve.yaml
    """
    from nerve.server import build_app

    setup_logging(log_level)
    config = load(config_path)
    require_extras(config)
    path = find_config_file(config_path, os.environ)
    app = build_app(config, config_path=path, channels=())  # tools only: no assistant loop
    logging.getLogger("nerve.mcp").info("nerve MCP server on stdio")

    async def serve() -> None:
        async with app.api.router.lifespan_context(app.api):
            await app.mcp.run_stdio_async()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve())
