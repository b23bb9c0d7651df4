"""Retrieval for a new session (SPEC ME-6): what an agent should know before it starts.

Four tiers, in this order: the active task (the latest task set and not yet finished), recent
sessions (what each did: its task, outcome and score, the files read and edited, the commands
run, its errors and its conversation summary; digest.py), important facts, then a search for
the query. The current session is never a "recent session". Items are deduplicated and capped at
`max_contexts`; `prompt_block` renders them for a fixed place in a system prompt, so a model
always finds its memory in the same spot.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from nerve.memory.digest import EVENTS, SessionDigest, summarize_events
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


RECENT_SESSIONS = 2
PAGE, PAGES = 50, 10  # events read, newest first, to find the recent sessions


@dataclass(frozen=True, slots=True)
class ContextItem:
    """One thing remembered; a recent session carries its digest, its record is the session's
    latest event or summary."""

    source: Source
    record: Record
    session: SessionDigest | None = None

    def text(self) -> str:
        return self.session.text() if self.session else describe(self.record)

    def to_dict(self) -> dict[str, Any]:
        out = {"source": self.source, "text": self.text(), **self.record.to_dict()}
        if self.session:
            out["session"] = self.session.to_dict()
        return out


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

    def room() -> int:  # for more recent sessions
        shown = sum(1 for i in items if i.source == "recent_session")
        return max(0, min(RECENT_SESSIONS - shown, max_contexts - len(items)))

    async def recent(**filters: Any) -> list[Record]:  # newest first
        return await memory.store.query(Query(user_id, **filters))

    task = await _active_task(memory, user_id)
    add("active_task", [task] if task else [], 1)
    if room():
        # One more than there is room for: a session whose records are all shown is skipped.
        for sid in await _recent_sessions(memory, user_id, session_id, room() + 1):
            if not room():
                break
            item = await _session_item(memory, user_id, sid, seen)
            if item is not None:
                seen.add(item.record.id)
                items.append(item)
    facts = sorted(await recent(kind="fact", limit=50), key=lambda r: -r.importance)
    add("fact", facts, 2)
    if query and query.strip():
        found = await memory.recall(user_id, query=query, limit=max_contexts * 2)
        add("search", [x.record for x in found], max_contexts)
    return Context(items, render(items))


async def _session_item(
    memory: Memory, user_id: str, session_id: str, seen: set[str]
) -> ContextItem | None:
    """What a past session did, as an item whose record is its newest one not shown yet; None
    when everything it holds is already shown (say its only record is the active task)."""
    events = await memory.store.query(
        Query(user_id, kind="event", session_id=session_id, limit=EVENTS)
    )
    if len(events) == EVENTS and not any(e.intent == "outcome_task" for e in events):
        events += await memory.store.query(
            Query(user_id, kind="event", intent="outcome_task", session_id=session_id, limit=1)
        )
    summaries = await memory.store.query(
        Query(user_id, kind="summary", session_id=session_id, limit=1)
    )
    fresh = [r for r in [*summaries, *events] if r.id not in seen]
    if not fresh:
        return None
    newest = max(fresh, key=lambda r: r.created_at)
    found = summarize_events(session_id, events, summaries[0] if summaries else None)
    return ContextItem("recent_session", newest, found)


async def _active_task(memory: Memory, user_id: str) -> Record | None:
    """The latest task set, unless a task was finished after it."""
    tasks = await memory.store.query(Query(user_id, kind="event", intent="outcome_task", limit=1))
    done = await memory.store.query(Query(user_id, kind="event", intent="outcome_done", limit=1))
    if tasks and not (done and done[0].created_at >= tasks[0].created_at):
        return tasks[0]
    return None


async def _recent_sessions(
    memory: Memory, user_id: str, current: str | None, want: int
) -> list[str]:
    """Up to `want` sessions but the current one, the latest active first: by their summaries
    and their events, paging back through events while the current session fills the pages."""
    latest: dict[str, float] = {}

    def note(records: list[Record]) -> None:
        for r in records:
            if r.session_id and r.session_id != current:
                latest[r.session_id] = max(latest.get(r.session_id, r.created_at), r.created_at)

    note(await memory.store.query(Query(user_id, kind="summary", limit=10)))
    until: float | None = None
    with_events: set[str] = set()
    for _ in range(PAGES):
        page = await memory.store.query(Query(user_id, kind="event", until=until, limit=PAGE))
        note(page)
        with_events.update(r.session_id for r in page if r.session_id and r.session_id != current)
        if len(page) < PAGE or len(with_events) >= want:
            break
        until = page[-1].created_at
    return sorted(latest, key=lambda sid: -latest[sid])[:want]


def render(items: list[ContextItem]) -> str:
    if not items:
        return ""
    lines = ["<memory>", "What you remember about this user (most relevant first):"]
    lines += [f"- [{LABELS[i.source]}] {i.text()}" for i in items]
    lines.append("</memory>")
    return "\n".join(lines)
