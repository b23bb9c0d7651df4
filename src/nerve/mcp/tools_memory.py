"""MCP tools over memory (SPEC ME-1..ME-6): store_memory, recall_memory, record_event,
store_fact, memory_context.

Thin adapters over `Memory` and `build_context`, the calls `/api/memory/*` make; `Memory` itself
enforces the rules (importance threshold, sizes, event payloads), so every surface agrees; the
argument types are the REST bodies' (memory/inputs.py), so the schemas state the same rules.
Over /mcp a key limited to some users may only name those (`caller(ctx).check_user`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field

from nerve.mcp.host import caller
from nerve.memory.context import build_context
from nerve.memory.events import EventType
from nerve.memory.fields import (
    Data,
    FactPart,
    FactValue,
    Intent,
    Language,
    Query,
    SessionId,
    Text,
    UserId,
)
from nerve.memory.inputs import EventSession, Importance, Limit, MaxContexts
from nerve.memory.model import Kind, Tier

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from nerve.mcp.host import Host

__all__ = ["ContextOut", "RecallOut", "StoredOut", "register"]


class StoredOut(BaseModel):
    stored: bool
    id: str | None
    reason: str | None = Field(description="why it was not kept, or a note")


class RecordOut(BaseModel):
    id: str
    user_id: str
    tier: Tier
    kind: Kind
    intent: str
    language: str | None
    session_id: str | None
    data: dict[str, Any]
    importance: float
    created_at: float = Field(description="epoch seconds")
    updated_at: float
    accessed_at: float | None
    access_count: int


class RecalledOut(RecordOut):
    score: float = Field(description="relevance × importance, decayed with age")


class RecallOut(BaseModel):
    records: list[RecalledOut]


class ContextItemOut(RecordOut):
    source: Literal["active_task", "recent_session", "fact", "search"]
    text: str
    session: dict[str, Any] | None = Field(
        None, description="a recent session's digest: task, outcome, score, files, commands"
    )


class ContextOut(BaseModel):
    items: list[ContextItemOut]
    prompt_block: str = Field(description="the items rendered for a system prompt")


def register(server: MCPServer[Any], app: Host) -> None:
    @server.tool()
    async def store_memory(
        ctx: Context[Any, Any],
        user_id: UserId,
        intent: Annotated[Intent, Field(description="e.g. preference")],
        tier: Tier,
        data: Data,
        importance_score: Importance,
        language: Language | None = None,
        session_id: SessionId | None = None,
    ) -> StoredOut:
        """Remember something about a user: short_term (this process only), episodic or
        semantic. Below the importance threshold nothing is kept and `reason` says so."""
        caller(ctx).check_user(user_id)
        stored = await app.memory.store_memory(
            user_id, tier=tier, intent=intent, data=data, importance=importance_score,
            language=language, session_id=session_id,
        )  # fmt: skip
        return StoredOut.model_validate(stored.to_dict())

    @server.tool()
    async def recall_memory(
        ctx: Context[Any, Any],
        user_id: UserId,
        intent: Text | None = None,
        tier: Tier | None = None,
        query: Query | None = None,
        limit: Limit = 10,
        kind: Kind | None = None,
        session_id: SessionId | None = None,
    ) -> RecallOut:
        """Recall a user's memories, filtered (intent, tier, kind, session) and, with a query,
        searched; ranked by relevance and importance decayed with age."""
        caller(ctx).check_user(user_id)
        found = await app.memory.recall(
            user_id, intent=intent, tier=tier, kind=kind, query=query, limit=limit,
            session_id=session_id,
        )  # fmt: skip
        return RecallOut.model_validate({"records": [x.to_dict() for x in found]})

    @server.tool()
    async def record_event(
        ctx: Context[Any, Any],
        user_id: UserId,
        session_id: EventSession,
        type: EventType,
        payload: Annotated[Data, Field(description="e.g. {path} for eye_read")],
        importance: Importance | None = None,
    ) -> StoredOut:
        """Record what you just did (a perception event): eye_read {path}, eye_search {query},
        body_tool {tool}, body_bash {command}, tongue_write/tongue_edit {path}, nose_error/
        nose_warning {message}, outcome_task {task}, outcome_done {score 0..1}."""
        caller(ctx).check_user(user_id)
        stored = await app.memory.record_event(user_id, session_id, type, payload, importance)
        return StoredOut.model_validate(stored.to_dict())

    @server.tool()
    async def store_fact(
        ctx: Context[Any, Any],
        user_id: UserId,
        entity: FactPart,
        attribute: FactPart,
        value: FactValue,
        importance: Importance,
        session_id: SessionId | None = None,
    ) -> StoredOut:
        """Store a fact triple (entity, attribute, value); a newer value replaces the latest one
        and the earlier values stay in its history."""
        caller(ctx).check_user(user_id)
        stored = await app.memory.store_fact(
            user_id, entity, attribute, value, importance, session_id
        )
        return StoredOut.model_validate(stored.to_dict())

    @server.tool()
    async def memory_context(
        ctx: Context[Any, Any],
        user_id: UserId,
        session_id: SessionId | None = None,
        query: Query | None = None,
        max_contexts: MaxContexts | None = None,
    ) -> ContextOut:
        """What to know at the start of a session: the active task, recent sessions, important
        facts and what relates to the query, with a `prompt_block` ready for a system prompt."""
        caller(ctx).check_user(user_id)
        built = await build_context(
            app.memory, user_id, session_id=session_id, query=query,
            max_contexts=max_contexts or app.config.memory.max_contexts,
        )  # fmt: skip
        return ContextOut.model_validate(built.to_dict())
