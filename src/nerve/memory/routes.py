"""REST routes of memory (SPEC PR-2, ME-2..ME-6): thin adapters over `Memory`.

Bodies are validated twice on purpose: pydantic here for the shape (a 400 naming the field,
and OpenAPI at /docs), then `Memory` for the rules (threshold, sizes), so the CLI and MCP that
call `Memory` directly get the same answers.

Whose data: every route acts for one user, and a key limited to some users (server.api_keys
`users`) may only name those: another user is a 403 naming it (`Principal.check_user`). Forgetting
one memory by id names no user: a limited key gets a 404 for another user's memory, as if it did
not exist (it learns neither the record nor whose it is). No route lists across users.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from nerve.access import principal_of
from nerve.errors import NotFound
from nerve.memory.context import build_context
from nerve.memory.model import Tier
from nerve.memory.service import Memory

__all__ = ["memory_router"]

UserId = Field(min_length=1, max_length=200)


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StoreBody(_Body):
    user_id: str = UserId
    tier: Tier
    intent: str = Field(min_length=1, max_length=100)
    data: dict[str, Any]
    importance: float = Field(ge=0, le=1)
    language: str | None = Field(None, max_length=16)
    session_id: str | None = Field(None, max_length=200)


class RecallBody(_Body):
    user_id: str = UserId
    intent: str | None = None
    tier: Tier | None = None
    kind: Literal["memory", "event", "fact", "turn", "summary"] | None = None
    query: str | None = Field(None, max_length=10_000)
    limit: int = Field(10, ge=1, le=10_000)
    since: datetime | float | None = None
    session_id: str | None = None


class EventBody(_Body):
    user_id: str = UserId
    session_id: str = Field(min_length=1, max_length=200)
    type: str
    payload: dict[str, Any]
    importance: float | None = Field(None, ge=0, le=1)


class FactBody(_Body):
    user_id: str = UserId
    entity: str = Field(min_length=1, max_length=500)
    attribute: str = Field(min_length=1, max_length=500)
    value: str | int | float | bool
    importance: float = Field(ge=0, le=1)
    session_id: str | None = Field(None, max_length=200)


class ContextBody(_Body):
    user_id: str = UserId
    session_id: str | None = Field(None, max_length=200)
    query: str | None = Field(None, max_length=10_000)
    max_contexts: int | None = Field(None, ge=1, le=50)


def _epoch(value: datetime | float | None) -> float | None:
    return value.timestamp() if isinstance(value, datetime) else value


def memory_router(memory: Callable[[], Memory], *, max_contexts: int = 5) -> APIRouter:
    router = APIRouter(prefix="/api/memory", tags=["memory"])

    @router.post("/store", summary="Store a memory (below the importance threshold: not kept)")
    async def store(body: StoreBody, request: Request) -> dict[str, Any]:
        principal_of(request.scope).check_user(body.user_id)
        stored = await memory().store_memory(
            body.user_id, tier=body.tier, intent=body.intent, data=body.data,
            importance=body.importance, language=body.language, session_id=body.session_id,
        )  # fmt: skip
        return stored.to_dict()

    @router.post("/recall", summary="Recall memories: filters, text query, decayed ranking")
    async def recall(body: RecallBody, request: Request) -> dict[str, Any]:
        principal_of(request.scope).check_user(body.user_id)
        found = await memory().recall(
            body.user_id, intent=body.intent, tier=body.tier, kind=body.kind, query=body.query,
            limit=body.limit, since=_epoch(body.since), session_id=body.session_id,
        )  # fmt: skip
        return {"records": [x.to_dict() for x in found]}

    @router.post("/events", summary="Record a perception event")
    async def events(body: EventBody, request: Request) -> dict[str, Any]:
        principal_of(request.scope).check_user(body.user_id)
        stored = await memory().record_event(
            body.user_id, body.session_id, body.type, body.payload, body.importance
        )
        return stored.to_dict()

    @router.post("/facts", summary="Store a fact triple (latest value kept, history too)")
    async def facts(body: FactBody, request: Request) -> dict[str, Any]:
        principal_of(request.scope).check_user(body.user_id)
        stored = await memory().store_fact(
            body.user_id, body.entity, body.attribute, body.value, body.importance,
            body.session_id,
        )  # fmt: skip
        return stored.to_dict()

    @router.post("/context", summary="What to know at the start of a session")
    async def context(body: ContextBody, request: Request) -> dict[str, Any]:
        principal_of(request.scope).check_user(body.user_id)
        built = await build_context(
            memory(), body.user_id, session_id=body.session_id, query=body.query,
            max_contexts=body.max_contexts or max_contexts,
        )  # fmt: skip
        return built.to_dict()

    @router.delete("/users/{user_id}", summary="Forget everything about a user")
    async def forget_user(user_id: str, request: Request) -> dict[str, Any]:
        principal_of(request.scope).check_user(user_id)
        return {"deleted": await memory().forget_user(user_id)}

    @router.delete("/{record_id}", summary="Forget one memory")
    async def forget(record_id: str, request: Request) -> dict[str, Any]:
        missing = NotFound(f"no memory with id {record_id!r}", param="id")
        principal = principal_of(request.scope)
        if principal.users is not None:  # a limited key: only its users' memories exist for it
            owner = await memory().owner(record_id)
            if owner is None or owner not in principal.users:
                raise missing
        deleted = await memory().forget([record_id])
        if not deleted:
            raise missing
        return {"deleted": deleted}

    return router
