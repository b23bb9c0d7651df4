"""nerve as an MCP server (SPEC PR-3, PR-5), on the official `mcp` SDK (v2, `MCPServer`).

    build_mcp_server(app) -> NerveMCP     the tools, as thin adapters over a NerveApp
    McpHttp(server, ...)                  /mcp over streamable HTTP in `nerve serve`
    `nerve mcp` (cli/mcp_cmd.py)          the same server over stdio
    McpClients(servers, cwd=...)          the client side (client.py, connection.py): the
                                          servers the assistant uses, kept connected

Tools by subsystem: tools_pipeline (process, check_safety, safe_execute), tools_memory
(store_memory, recall_memory, record_event, store_fact, memory_context), tools_gateway
(route_model, reason), tools_agents (register_agent, route_agent), tools_voice (transcribe,
synthesize). Errors become `is_error` results in one place: `NerveMCP.call_tool`.
"""

from nerve.mcp.http import MCP_PATHS, McpHttp
from nerve.mcp.server import NerveMCP, build_mcp_server

__all__ = ["MCP_PATHS", "TOOL_NAMES", "McpHttp", "NerveMCP", "build_mcp_server"]

TOOL_NAMES = (
    "process", "check_safety", "safe_execute",
    "store_memory", "recall_memory", "record_event", "store_fact", "memory_context",
    "register_agent", "route_agent", "route_model", "reason", "transcribe", "synthesize",
)  # fmt: skip
