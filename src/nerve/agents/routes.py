"""REST routes of the agent registry (SPEC PR-4): thin adapters over `AgentRegistry`.

    POST   /api/agents                {agent_name, endpoint, capabilities}  201 new, 200 updated
    GET    /api/agents[?capability=x] {"agents": [...]}
    GET    /api/agents/{agent_name}   the agent, or 404
    DELETE /api/agents/{agent_name}   {"deleted": true}, or 404
    POST   /api/agents/route          {target_agent, task, payload, idempotent?}

A route's outcome is data: an unknown or failing agent is still a 200 whose body says
`success: false, fallback: true` and why, as the MCP `route_agent` tool answers. Malformed
bodies are 400s naming the field (pydantic for shapes, the registry for the rules).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Response
from pydantic import BaseModel, ConfigDict, Field

from nerve.agents.model import MAX_CAPABILITIES
from nerve.agents.registry import MAX_ENDPOINT_CHARS, AgentRegistry
from nerve.errors import NotFound

__all__ = ["agents_router"]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RegisterBody(_Body):
    agent_name: str = Field(min_length=1, max_length=100)
    endpoint: str = Field(min_length=1, max_length=MAX_ENDPOINT_CHARS)
    capabilities: list[str] = Field(default_factory=list, max_length=MAX_CAPABILITIES)


class RouteBody(_Body):
    target_agent: str = Field(min_length=1, max_length=100)
    task: str = Field(min_length=1, max_length=100)
    payload: dict[str, Any] = Field(default_factory=dict)
    idempotent: bool = Field(False, description="Retry with backoff when the call fails.")


def agents_router(get_registry: Callable[[], AgentRegistry]) -> APIRouter:
    router = APIRouter(prefix="/api/agents", tags=["agents"])

    @router.post("", summary="Register or update an agent", status_code=201)
    async def register(body: RegisterBody, response: Response) -> dict[str, Any]:
        agent, created = await get_registry().upsert(
            body.agent_name, body.endpoint, body.capabilities
        )
        response.status_code = 201 if created else 200
        return agent

    @router.get("", summary="List agents, optionally those with a capability")
    async def list_agents(capability: str | None = None) -> dict[str, Any]:
        return {"agents": await get_registry().list(capability)}

    @router.post("/route", summary="Send a task to an agent (failures are data: fallback)")
    async def route(body: RouteBody) -> dict[str, Any]:
        return await get_registry().route(
            body.target_agent, body.task, body.payload, idempotent=body.idempotent
        )

    @router.get("/{agent_name}", summary="One agent")
    async def get(agent_name: str) -> dict[str, Any]:
        agent = await get_registry().get(agent_name)
        if agent is None:
            raise NotFound(f"no agent named {agent_name!r} is registered", param="agent_name")
        return agent

    @router.delete("/{agent_name}", summary="Unregister an agent")
    async def delete(agent_name: str) -> dict[str, Any]:
        if not await get_registry().delete(agent_name):
            raise NotFound(f"no agent named {agent_name!r} is registered", param="agent_name")
        return {"deleted": True}

    return router
