"""MCP tools over the agents registry (SPEC PR-4): register_agent, route_agent.

Thin adapters over `NerveApp.agents` (`AgentRegistry`), the calls `/api/agents` makes. An
unreachable agent is not a tool error: `route_agent` answers {success: false, error, fallback}.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from nerve.mcp.host import Host

__all__ = ["AgentOut", "RouteAgentOut", "register"]

AgentName = Annotated[str, Field(min_length=1, max_length=100)]


class AgentOut(BaseModel):
    agent_name: str
    endpoint: str
    capabilities: list[str]
    created_at: float
    updated_at: float


class RouteAgentOut(BaseModel):
    success: bool
    agent: str
    result: Any = Field(None, description="the agent's JSON answer, when it succeeded")
    latency_ms: float | None = None
    error: str | None = Field(None, description="why it failed, when it did")
    fallback: bool = Field(False, description="true: the caller should fall back to itself")


def register(server: MCPServer[Any], app: Host) -> None:
    @server.tool()
    async def register_agent(
        agent_name: AgentName,
        endpoint: Annotated[str, Field(description="the agent's URL; tasks are POSTed to it")],
        capabilities: Annotated[list[str], Field(description="the tasks it can do")],
    ) -> AgentOut:
        """Register (or update, by name) an agent that nerve can route tasks to over REST."""
        stored = await app.agents.register(agent_name, endpoint, capabilities)
        return AgentOut.model_validate(stored)

    @server.tool()
    async def route_agent(
        target_agent: AgentName,
        task: Annotated[str, Field(min_length=1, max_length=100)],
        payload: dict[str, Any] | None = None,
        idempotent: Annotated[
            bool, Field(description="safe to retry: retried with backoff when it fails")
        ] = False,
    ) -> RouteAgentOut:
        """Send a task to a registered agent: POST {task, payload}; its answer as `result`. An
        unreachable agent gives success=false with the error, not a tool error."""
        routed = await app.agents.route(target_agent, task, payload or {}, idempotent=idempotent)
        return RouteAgentOut.model_validate(routed)
