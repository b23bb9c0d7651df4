"""HTTP routes of the fan-out (SPEC GW-11): POST /parallel, /analysis, /task.

They count against the caller's rate limits like a chat request; the boundary checked the key.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from nerve.access.principal import principal_of
from nerve.gateway import fanout
from nerve.gateway.app import GatewayState
from nerve.gateway.request import validate_chat_request

__all__ = ["fanout_router"]


class ParallelBody(BaseModel):
    model_config = ConfigDict(extra="allow")  # temperature, tools... go to every model as sent
    models: list[str] = Field(min_length=1, max_length=16,
                              description="Routes, provider/model targets or auto.")  # fmt: skip
    messages: list[dict[str, Any]] = Field(min_length=1)


class TaskBody(BaseModel):
    model_config = ConfigDict(extra="allow")
    route: str = Field(min_length=1, description="A route name (or provider/model).")
    messages: list[dict[str, Any]] = Field(min_length=1)


class AnalysisBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    messages: list[dict[str, Any]] = Field(min_length=1)
    model: str = "auto"
    personas: list[str] | None = Field(None, min_length=1, max_length=6)


def fanout_router(state: Callable[[], GatewayState]) -> APIRouter:
    router = APIRouter(tags=["gateway"])

    @asynccontextmanager
    async def admitted(request: Request) -> AsyncIterator[None]:
        keys = state().keys
        ticket = await keys.admit(principal_of(request.scope))
        try:
            yield
        finally:
            await keys.leave(ticket)

    @router.post("/parallel", summary="One request to several models at once")
    async def parallel(body: ParallelBody, request: Request) -> dict[str, Any]:
        rest = {**(body.model_extra or {}), "messages": body.messages}
        validate_chat_request({**rest, "model": body.models[0]})
        async with admitted(request):
            return await fanout.parallel(state().gateway, rest, body.models)

    @router.post("/task", summary="Dispatch to one route and return who answered")
    async def task(body: TaskBody, request: Request) -> dict[str, Any]:
        chat = {**(body.model_extra or {}), "messages": body.messages, "model": body.route}
        validate_chat_request(chat)
        async with admitted(request):
            return await fanout.task(state().gateway, chat)

    @router.post("/analysis", summary="Several perspectives, then a synthesis")
    async def analysis(body: AnalysisBody, request: Request) -> dict[str, Any]:
        validate_chat_request({"model": body.model, "messages": body.messages})
        async with admitted(request):
            return await fanout.analysis(
                state().gateway, body.messages, model=body.model,
                personas=body.personas or fanout.DEFAULT_PERSONAS,
            )  # fmt: skip

    return router
