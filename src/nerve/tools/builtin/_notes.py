"""Per-user notes kept in memory (memo and task): semantic records of one kind, nothing else.

They go through `nerve.memory.Memory` only (no side files): stored with importance 1.0 so the
threshold never drops them, listed by kind, and deleted only when the id is the caller's own.
"""

from __future__ import annotations

from typing import Any, cast

from nerve.memory import Memory
from nerve.memory.model import Kind, Record
from nerve.tools.result import ToolContext, ToolError

__all__ = ["find", "forget", "listing", "memory_of", "save"]

LIMIT = 500  # notes listed per user and kind


def memory_of(ctx: ToolContext) -> Memory:
    if ctx.services.memory is None:
        raise ToolError("memory is disabled (memory.enabled: false), so notes cannot be kept")
    return ctx.services.memory


async def listing(memory: Memory, user_id: str, kind: str) -> list[Record]:
    """The user's records of `kind`, oldest first."""
    found = await memory.recall(user_id, kind=cast(Kind, kind), limit=LIMIT, touch=False)
    return sorted((r.record for r in found), key=lambda r: (r.created_at, r.id))


async def save(
    memory: Memory, user_id: str, kind: str, data: dict[str, Any], created_at: float | None = None
) -> str:
    stored = await memory.store_memory(
        user_id, tier="semantic", intent=kind, data=data, importance=1.0,
        kind=cast(Kind, kind), created_at=created_at,
    )  # fmt: skip
    if not stored.stored or stored.id is None:
        raise ToolError(f"could not save the {kind}: {stored.reason}")
    return stored.id


async def find(memory: Memory, user_id: str, kind: str, id: str | None) -> Record:
    """The caller's own record by id (or a unique prefix of at least 6 characters)."""
    if not id or not id.strip():
        raise ToolError(f"'id' is required: the id of the {kind}, as listed")
    key = id.strip()
    mine = [r for r in await listing(memory, user_id, kind) if r.id.startswith(key)]
    if len(mine) == 1 and (len(key) >= 6 or mine[0].id == key):
        return mine[0]
    if len(mine) > 1:
        raise ToolError(f"id {key!r} matches {len(mine)} {kind}s; give more of it")
    raise ToolError(f"no {kind} with id {key!r}; list them to see the ids")


async def forget(memory: Memory, record: Record) -> None:
    await memory.forget([record.id])
