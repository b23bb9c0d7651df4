"""`task`: the user's to-do list, per user, in memory (kind "task"); open tasks feed the prompt.

Marking a task done stores its done copy before the open one is forgotten, so a crash between
the two leaves a duplicate, never a lost task. `open_tasks` is what the prompt builder calls.
"""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal

from pydantic import Field

from nerve.memory import Memory
from nerve.memory.model import Record
from nerve.tools.base import tool
from nerve.tools.builtin import _notes
from nerve.tools.result import ToolContext, ToolError

__all__ = ["open_tasks", "task"]

KIND = "task"


def _view(r: Record) -> dict[str, Any]:
    return {"id": r.id, "title": r.data.get("title"), "done": bool(r.data.get("done"))}


async def open_tasks(memory: Memory, user_id: str) -> list[dict[str, Any]]:
    """The user's open tasks, oldest first: [{"id", "title", "created_at"}]."""
    records = await _notes.listing(memory, user_id, KIND)
    return [
        {"id": r.id, "title": r.data.get("title"), "created_at": r.created_at}
        for r in records if not r.data.get("done")
    ]  # fmt: skip


@tool(description="Add, list or complete tasks on this user's to-do list.")
async def task(
    ctx: ToolContext,
    action: Literal["add", "list", "done"],
    title: Annotated[str | None, Field(description="what is to be done (add)")] = None,
    id: Annotated[str | None, Field(description="the task's id, as listed (done)")] = None,
) -> dict[str, Any]:
    memory = _notes.memory_of(ctx)
    if action == "add":
        if not title or not title.strip():
            raise ToolError("'title' is required to add a task")
        new = await _notes.save(memory, ctx.user_id, KIND, {"title": title.strip(), "done": False})
        return {"added": {"id": new, "title": title.strip(), "done": False}}
    if action == "done":
        record = await _notes.find(memory, ctx.user_id, KIND, id)
        if record.data.get("done"):
            return {"already_done": _view(record)}
        data = {**record.data, "done": True, "done_at": time.time()}
        new = await _notes.save(memory, ctx.user_id, KIND, data, created_at=record.created_at)
        await _notes.forget(memory, record)
        return {"done": {"id": new, "title": data.get("title"), "done": True}}
    tasks = [_view(r) for r in await _notes.listing(memory, ctx.user_id, KIND)]
    return {"tasks": sorted(tasks, key=lambda t: t["done"])}
