"""Retrieval for a new session (SPEC ME-6): what an agent should know before it starts.

Four tiers, in this order: the active task (the latest task set and not yet finished), recent
sessions (their summaries, else their latest records), important facts, then a search for the
query. Items are deduplicated and capped at `max_contexts`; `prompt_block` renders them for a
fixed place in a system prompt, so a model always finds its memory in the same spot.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from nerve.memory.model import Record
from nerve.memory.service import Memory
from nerve.memory.store import Query

__all__ = ["Context", "ContextItem", "build_context"]

Source = Literal["active_task", "recent_session", "fact", "search"]
LABELS: dict[Source, str] = {
    "active_task": "current task",
    "recent_session": "recent session",
    "fact": "fact",
    "search": "related",
}


@dataclass(frozen=True, slots=True)
class ContextItem:
    source: Source
    record: Record

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "text": describe(self.record), **self.record.to_dict()}


@dataclass(frozen=True, slots=True)
class Context:
    items: list[ContextItem]
    prompt_block: str

    def to_dict(self) -> dict[str, Any]:
        return {"items": [i.to_dict() for i in self.items], "prompt_block": self.prompt_block}


def describe(record: Record) -> str:
    data = record.data
    if record.kind == "fact":
        return f"{data.get('entity')} {data.get('attribute')}: {data.get('value')}"
    if record.kind == "summary":
        return str(data.get("text", record.text))
    if record.kind == "event":
        detail = next(
            (
                str(data[k])
                for k in ("task", "message", "command", "path", "query", "tool", "summary")
                if data.get(k)
            ),
            "",
        )
        score = f" (score {data['score']:g})" if "score" in data else ""
        return f"{record.intent}: {detail}{score}".strip()
    return record.text[:300]


async def build_context(
    memory: Memory,
    user_id: str,
    *,
    session_id: str | None = None,
    query: str | None = None,
    max_contexts: int = 5,
) -> Context:
    items: list[ContextItem] = []
    seen: set[str] = set()

    def add(source: Source, records: list[Record], room: int) -> None:
        for record in records:
            if len(items) >= max_contexts or room <= 0:
                return
            if record.id not in seen:
                seen.add(record.id)
                items.append(ContextItem(source, record))
                room -= 1

    async def recent(**filters: Any) -> list[Record]:  # newest first
        return await memory.store.query(Query(user_id, **filters))

    task = await _active_task(memory, user_id)
    add("active_task", [task] if task else [], 1)
    summaries = [r for r in await recent(kind="summary", limit=10) if r.session_id != session_id]
    if not summaries:
        summaries = [
            r
            for r in await recent(kind="event", limit=20)
            if r.session_id and r.session_id != session_id
        ]
    add("recent_session", _one_per_session(summaries), 2)
    facts = sorted(await recent(kind="fact", limit=50), key=lambda r: -r.importance)
    add("fact", facts, 2)
    if query and query.strip():
        found = await memory.recall(user_id, query=query, limit=max_contexts * 2)
        add("search", [x.record for x in found], max_contexts)
    return Context(items, render(items))


async def _active_task(memory: Memory, user_id: str) -> Record | None:
    """The latest task set, unless a task was finished after it."""
    tasks = await memory.store.query(Query(user_id, kind="event", intent="outcome_task", limit=1))
    done = await memory.store.query(Query(user_id, kind="event", intent="outcome_done", limit=1))
    if tasks and not (done and done[0].created_at >= tasks[0].created_at):
        return tasks[0]
    return None


def _one_per_session(records: list[Record]) -> list[Record]:
    seen: set[str | None] = set()
    out = []
    for record in sorted(records, key=lambda r: -r.created_at):
        if record.session_id not in seen:
            seen.add(record.session_id)
            out.append(record)
    return out


def render(items: list[ContextItem]) -> str:
    if not items:
        return ""
    lines = ["<memory>", "What you remember about this user (most relevant first):"]
    lines += [f"- [{LABELS[i.source]}] {describe(i.record)}" for i in items]
    lines.append("</memory>")
    return "\n".join(lines)
