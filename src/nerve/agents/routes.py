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
from typing import Annotated, Any

from fastapi import APIRouter, Path, Response
from pydantic import BaseModel, ConfigDict, Field

from nerve.agents.model import (
    CAPABILITY_PATTERN,
    ENDPOINT_PATTERN,
    MAX_CAPABILITIES,
    MAX_CAPABILITY_CHARS,
    NAME_PATTERN,
)
from nerve.agents.registry import MAX_ENDPOINT_CHARS, AgentRegistry
from nerve.errors import NotFound
from nerve.memory.fields import NAME
from nerve.openapi_doc import errors

__all__ = ["agents_router"]

# The registry's rules (model.py), stated for the schema; the registry checks them again.
AgentName = Annotated[str, Field(min_length=1, max_length=100, pattern=NAME_PATTERN)]
AgentNamePath = Annotated[str, Path(min_length=1, max_length=100, pattern=NAME_PATTERN)]
Capability = Annotated[
    str, Field(min_length=1, max_length=MAX_CAPABILITY_CHARS, pattern=CAPABILITY_PATTERN)
]


class _Body(BaseModel):
    # Strict: a JSON false is not 0, a 1 is not true (what the schema's types say).
    model_config = ConfigDict(extra="forbid", strict=True)


class RegisterBody(_Body):
    agent_name: AgentName
    endpoint: str = Field(
        min_length=1, max_length=MAX_ENDPOINT_CHARS, pattern=ENDPOINT_PATTERN,
        description="Where tasks are POSTed: loopback, or a host in agents.allowed_hosts "
        "(another host is a 400).",
    )  # fmt: skip
    capabilities: list[Capability] = Field(default_factory=list, max_length=MAX_CAPABILITIES)


class RouteBody(_Body):
    target_agent: AgentName
    task: Annotated[str, Field(min_length=1, max_length=MAX_CAPABILITY_CHARS), NAME]
    payload: dict[str, Any] = Field(default_factory=dict)
    idempotent: bool = Field(False, description="Retry with backoff when the call fails.")


def agents_router(get_registry: Callable[[], AgentRegistry]) -> APIRouter:
    router = APIRouter(prefix="/api/agents", tags=["agents"])

    @router.post(
        "", summary="Register or update an agent", status_code=201,
        responses={200: {"description": "An agent of that name was updated."}},
    )  # fmt: skip
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

    @router.get("/{agent_name}", summary="One agent", responses=errors(404))
    async def get(agent_name: AgentNamePath) -> dict[str, Any]:
        agent = await get_registry().get(agent_name)
        if agent is None:
            raise NotFound(f"no agent named {agent_name!r} is registered", param="agent_name")
        return agent

    @router.delete("/{agent_name}", summary="Unregister an agent", responses=errors(404))
    async def delete(agent_name: AgentNamePath) -> dict[str, Any]:
        if not await get_registry().delete(agent_name):
            raise NotFound(f"no agent named {agent_name!r} is registered", param="agent_name")
        return {"deleted": True}

    return router
