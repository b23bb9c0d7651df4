"""REST routes of memory (SPEC PR-2, ME-2..ME-6): thin adapters over `Memory`.

Bodies are validated twice on purpose: pydantic for the shape and the text rules (inputs.py: a
400 naming the field, and OpenAPI at /docs saying what is accepted; the types are the MCP
tools' too), then `Memory` for the rest (threshold, sizes, a NUL), so the CLI that calls
`Memory` directly gets the same answers.

Whose data: every route acts for one user, and a key limited to some users (server.api_keys
`users`) may only name those: another user is a 403 naming it (`Principal.check_user`). Forgetting
one memory by id names no user: a limited key gets a 404 for another user's memory, as if it did
not exist (it learns neither the record nor whose it is). No route lists across users.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request

from nerve.access import principal_of
from nerve.errors import NotFound
from nerve.memory.context import build_context
from nerve.memory.fields import MAX_USER_ID, NAME
from nerve.memory.inputs import (
    ContextBody,
    EventBody,
    FactBody,
    RecallBody,
    StoreBody,
    epoch,
)
from nerve.memory.service import Memory
from nerve.openapi_doc import errors

__all__ = ["memory_router"]

UserIdPath = Annotated[str, Path(min_length=1, max_length=MAX_USER_ID), NAME]
RecordId = Annotated[str, Path(min_length=1), NAME]


def memory_router(memory: Callable[[], Memory], *, max_contexts: int = 5) -> APIRouter:
    # Every route: 404 `memory_disabled` when the config turns memory off.
    router = APIRouter(prefix="/api/memory", tags=["memory"], responses=errors(404))

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
            limit=body.limit, since=epoch(body.since), session_id=body.session_id,
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
    async def forget_user(user_id: UserIdPath, request: Request) -> dict[str, Any]:
        principal_of(request.scope).check_user(user_id)
        return {"deleted": await memory().forget_user(user_id)}

    @router.delete("/{record_id}", summary="Forget one memory")
    async def forget(record_id: RecordId, request: Request) -> dict[str, Any]:
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
