"""`memo`: short notes the user asks to keep, per user, stored in memory (kind "memo")."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from nerve.tools.base import tool
from nerve.tools.builtin import _notes
from nerve.tools.result import ToolContext, ToolError

__all__ = ["memo"]

KIND = "memo"


@tool(description="Save, list or delete short notes for this user (kept across conversations).")
async def memo(
    ctx: ToolContext,
    action: Literal["add", "list", "delete"],
    content: Annotated[str | None, Field(description="the note's text (add)")] = None,
    id: Annotated[str | None, Field(description="the note's id, as listed (delete)")] = None,
) -> dict[str, Any]:
    memory = _notes.memory_of(ctx)
    if action == "add":
        if not content or not content.strip():
            raise ToolError("'content' is required to add a memo")
        new = await _notes.save(memory, ctx.user_id, KIND, {"content": content.strip()})
        return {"added": {"id": new, "content": content.strip()}}
    if action == "delete":
        record = await _notes.find(memory, ctx.user_id, KIND, id)
        await _notes.forget(memory, record)
        return {"deleted": {"id": record.id, "content": record.data.get("content")}}
    memos = await _notes.listing(memory, ctx.user_id, KIND)
    return {"memos": [{"id": r.id, "content": r.data.get("content")} for r in memos]}
