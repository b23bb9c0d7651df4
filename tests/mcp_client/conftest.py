"""AS-5 fixtures: MCP server configs (the crashing fake, `nerve mcp`) and McpClients that stop.

crashing(name="crashy")   a McpServerConfig spawning tests/fakes/crashing_mcp.py over stdio
open_clients(servers)     McpClients started (children's stderr to a file), stopped at teardown
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path

import pytest

from nerve.config_sections import McpServerConfig
from nerve.mcp.client import McpClients

FAKE = Path(__file__).resolve().parents[1] / "fakes" / "crashing_mcp.py"
Open = Callable[[list[McpServerConfig]], Awaitable[McpClients]]


def crashing(name: str = "crashy", marker: Path | None = None) -> McpServerConfig:
    env = {"CRASHING_MCP_MARKER": str(marker)} if marker else {}
    return McpServerConfig(name=name, command=sys.executable, args=[str(FAKE)], env=env)


@pytest.fixture
def open_clients(tmp_path: Path, closing: AsyncExitStack) -> Open:
    errlog = closing.enter_context((tmp_path / "mcp-stderr.log").open("w"))

    async def start(servers: list[McpServerConfig]) -> McpClients:
        clients = McpClients(servers, cwd=tmp_path, errlog=errlog)
        closing.push_async_callback(clients.stop)
        await clients.start(wait=30)
        return clients

    return start
