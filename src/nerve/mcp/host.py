"""What the MCP tools use of a running nerve: the seam between mcp and the server that hosts it.

`nerve.server.NerveApp` satisfies `Host`; the tools see only these objects, so mcp never
imports the server (which imports mcp to mount /mcp).
"""

from __future__ import annotations

from typing import Any, Protocol

from mcp.server.mcpserver import Context
from starlette.requests import HTTPConnection

from nerve.access import LOCAL, Principal, principal_of
from nerve.agents import AgentRegistry
from nerve.config import Config
from nerve.gateway.app import GatewayState
from nerve.memory import Memory
from nerve.pipeline.process import Pipeline
from nerve.voice import Voice

__all__ = ["Host", "caller"]


class Host(Protocol):
    @property
    def config(self) -> Config: ...
    @property
    def gateway(self) -> GatewayState: ...
    @property
    def memory(self) -> Memory: ...
    @property
    def pipeline(self) -> Pipeline: ...
    @property
    def agents(self) -> AgentRegistry: ...
    @property
    def voice(self) -> Voice: ...


def caller(ctx: Context[Any, Any]) -> Principal:
    """Who made this tool call: the principal the boundary put on its HTTP request (/mcp), or
    LOCAL when there is none (stdio, or a call made in process)."""
    try:
        request = ctx.request_context.request
    except ValueError:  # the SDK's "outside of a request"
        return LOCAL
    return principal_of(request.scope) if isinstance(request, HTTPConnection) else LOCAL
