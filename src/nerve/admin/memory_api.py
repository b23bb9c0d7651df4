"""The admin panel's Memory page: one user's records, the context a query would produce, and
forgetting (SPEC ME-2, ME-6), through the same `Memory` API as /api/memory (memory/routes.py).

    GET    /admin/api/memory                                         {enabled, kinds}
    GET    /admin/api/memory/records?user_id=&kind=&query=&limit=   {records: [...]}
    GET    /admin/api/memory/context?user_id=&query=                 {items, prompt_block}
    DELETE /admin/api/memory/records/{id}                            {deleted: 1}, 404 if none
    DELETE /admin/api/memory/users/{user_id}                         {deleted: n}

With memory off every one is a 404 `memory_disabled` (`host.memory` says so): the page shows it.
Reading here does not count as a recall (`touch=False`): looking at a user's memories from the
panel must not change how they rank for the user. Forgetting is audited in the event log.
"""

from __future__ import annotations

from typing import Any, cast

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from nerve.admin.http import Handler
from nerve.admin.panel import AdminPanel
from nerve.errors import NotFound, RequestError
from nerve.memory.context import build_context
from nerve.memory.model import KINDS, Kind
from nerve.memory.service import Memory

__all__ = ["memory_routes"]

MAX_LIMIT = 500


def _user(request: Request) -> str:
    user = request.query_params.get("user_id", "").strip()
    if not user:
        raise RequestError("'user_id' is required: whose memory to show", param="user_id")
    return user


def _kind(request: Request) -> Kind | None:
    kind = request.query_params.get("kind") or None
    if kind is not None and kind not in KINDS:
        raise RequestError(f"'kind' is one of {', '.join(KINDS)}", param="kind")
    return kind


def _limit(request: Request) -> int:
    try:
        limit = int(request.query_params.get("limit", "100"))
    except ValueError:
        raise RequestError("'limit' is an integer", param="limit") from None
    if not 1 <= limit <= MAX_LIMIT:
        raise RequestError(f"'limit' is from 1 to {MAX_LIMIT}", param="limit")
    return limit


def memory_routes(panel: AdminPanel) -> list[tuple[str, Handler, list[str]]]:
    host: Any = panel.host

    def memory() -> Memory:
        return cast(Memory, host.memory)  # NotFound `memory_disabled` when memory is off

    async def status(request: Request) -> Response:
        try:
            memory()
        except NotFound as e:  # the page says so at once, before anyone types a user id
            return JSONResponse({"enabled": False, "reason": e.message, "kinds": list(KINDS)})
        return JSONResponse({"enabled": True, "reason": None, "kinds": list(KINDS)})

    async def records(request: Request) -> Response:
        user, kind, limit = _user(request), _kind(request), _limit(request)
        query = request.query_params.get("query") or None
        found = await memory().recall(user, kind=kind, query=query, limit=limit, touch=False)
        return JSONResponse({"user_id": user, "records": [x.to_dict() for x in found]})

    async def context(request: Request) -> Response:
        user = _user(request)
        most = host.config.memory.max_contexts
        query = request.query_params.get("query") or None
        built = await build_context(memory(), user, query=query, max_contexts=most)
        return JSONResponse({"user_id": user, **built.to_dict()})

    async def forget(request: Request) -> Response:
        record_id = request.path_params["record_id"]
        owner = await memory().owner(record_id)
        if owner is None or not await memory().forget([record_id]):
            raise NotFound(f"no memory with id {record_id!r}", param="id")
        client = panel.client(request.scope)
        await panel.events.record("MEMORY_FORGET", id=record_id, user_id=owner, client=client)
        return JSONResponse({"deleted": 1, "id": record_id, "user_id": owner})

    async def forget_user(request: Request) -> Response:
        user = request.path_params["user_id"].strip()
        deleted = await memory().forget_user(user)
        client = panel.client(request.scope)
        await panel.events.record(
            "MEMORY_FORGET_USER", user_id=user, deleted=deleted, client=client
        )
        return JSONResponse({"deleted": deleted, "user_id": user})

    return [
        ("/admin/api/memory", status, ["GET"]),
        ("/admin/api/memory/records", records, ["GET"]),
        ("/admin/api/memory/context", context, ["GET"]),
        ("/admin/api/memory/records/{record_id}", forget, ["DELETE"]),
        ("/admin/api/memory/users/{user_id}", forget_user, ["DELETE"]),
    ]
