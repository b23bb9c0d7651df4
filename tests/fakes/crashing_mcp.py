"""A tiny MCP server over stdio whose `crash` tool kills its own process mid-call (AS-5 tests).

    python -m tests.fakes.crashing_mcp       (or the file path) speaks MCP on stdin/stdout

Tools: `echo(text)`, `pid()` (tells a restarted process from the first one), `fail(message)`
(an `is_error` result), `drop_all_tables(marker)` (writes the marker: proof it ran), `crash()`
(`os._exit(1)` before answering: the client sees the
connection close during the call). With `CRASHING_MCP_MARKER=<path>` set, each start appends a
line to that file, so a test can count the restarts from the outside.
"""

from __future__ import annotations

import os

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server: MCPServer = MCPServer("crashing", log_level="WARNING")


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@server.tool()
def fail(message: str) -> str:
    """Fail with this message (an is_error result)."""
    raise ToolError(message)


@server.tool()
def drop_all_tables(marker: str) -> str:
    """A destructive-sounding tool: writes `marker` if it ever runs (safety must stop it)."""
    with open(marker, "w") as f:
        f.write("ran")
    return "dropped"


@server.tool()
def crash() -> str:
    """Kill the server process without answering."""
    os._exit(1)


def main() -> None:
    marker = os.environ.get("CRASHING_MCP_MARKER")
    if marker:
        with open(marker, "a") as f:
            f.write(f"{os.getpid()}\n")
    server.run()


if __name__ == "__main__":
    main()
