"""AS-5 fixtures: MCP server configs (the crashing fake, `nerve mcp`) and McpClients that stop.

crashing(name="crashy")   a McpServerConfig spawning tests/fakes/crashing_mcp.py over stdio
open_clients(servers)     McpClients started (children's stderr to a file), stopped at teardown
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Awaitable, Callable
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
async def open_clients(tmp_path: Path) -> AsyncIterator[Open]:
    opened: list[McpClients] = []
    with (tmp_path / "mcp-stderr.log").open("w") as errlog:

        async def start(servers: list[McpServerConfig]) -> McpClients:
            clients = McpClients(servers, cwd=tmp_path, errlog=errlog)
            opened.append(clients)
            await clients.start(wait=30)
            return clients

        yield start
        for clients in opened:
            await clients.stop()
