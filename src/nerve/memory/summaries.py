"""Cascading conversation summaries (SPEC ME-9).

Turns are stored as they happen. Past `max_turns` (20) turns in a session, the older ones are
summarised together with the session's previous summary into one new summary; the new summary
and the deletion of what it replaces happen in one transaction, and only after the summarizer
succeeded. If summarising fails, every turn is still there and the error is raised to the caller.
The summarizer is pluggable (the gateway when configured); `extractive` needs no model.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from nerve.memory.model import Record
from nerve.memory.service import Memory, Stored
from nerve.memory.store import Query

__all__ = ["Summarizer", "add_turn", "extractive", "model_summarizer", "summarize_session"]

Summarizer = Callable[[str | None, Sequence[Record]], Awaitable[str]]
TURN_IMPORTANCE = 0.5
SUMMARY_IMPORTANCE = 0.6


async def extractive(previous: str | None, turns: Sequence[Record], limit: int = 2000) -> str:
    """No model: the previous summary, then the first sentence of each turn, oldest first."""
    parts = [previous] if previous else []
    for turn in sorted(turns, key=lambda r: r.created_at):
        text = str(turn.data.get("content", turn.text)).strip()
        first = text.split(". ")[0][:200]
        parts.append(f"{turn.data.get('role', 'user')}: {first}")
    summary = "\n".join(parts)
    return summary if len(summary) <= limit else "…" + summary[-limit:]


def model_summarizer(ask: Callable[..., Awaitable[str]], *, model: str = "auto") -> Summarizer:
    """A summarizer that asks a model through the gateway (injected `ask`; memory never imports
    the gateway). An empty answer is an error, so the turns are kept."""

    async def summarize(previous: str | None, turns: Sequence[Record]) -> str:
        lines = [f"{t.data.get('role', 'user')}: {t.data.get('content', t.text)}"
                 for t in sorted(turns, key=lambda r: r.created_at)]  # fmt: skip
        prompt = (
            "Summarise this conversation for your own later reference: decisions, facts, open "
            "tasks, names. At most 200 words.\n\n"
            + (f"Summary so far:\n{previous}\n\n" if previous else "")
            + "New turns:\n"
            + "\n".join(lines)
        )
        text = (await ask([{"role": "user", "content": prompt}], model=model)).strip()
        if not text:
            raise ValueError("the model returned an empty summary")
        return text

    return summarize


async def add_turn(
    memory: Memory, user_id: str, session_id: str, role: str, content: str
) -> Stored:
    return await memory.store_memory(
        user_id, tier="episodic", intent="conversation", kind="turn", session_id=session_id,
        data={"role": role, "content": content}, importance=TURN_IMPORTANCE,
    )  # fmt: skip


async def summarize_session(
    memory: Memory,
    user_id: str,
    session_id: str,
    *,
    summarizer: Summarizer = extractive,
    max_turns: int = 20,
    keep_recent: int = 10,
) -> Record | None:
    """Summarise a session's older turns once it has more than `max_turns`; None otherwise."""
    turns = await memory.store.query(Query(user_id, kind="turn", session_id=session_id))
    if len(turns) <= max_turns:
        return None
    old = sorted(turns, key=lambda r: r.created_at)[: len(turns) - keep_recent]
    previous = await memory.store.query(
        Query(user_id, kind="summary", session_id=session_id, limit=1)
    )
    before = previous[0] if previous else None
    text = await summarizer(str(before.data.get("text")) if before else None, old)
    folded = len(old) + (int(before.data.get("turns", 0)) if before else 0)
    summary = Record.make(
        user_id=user_id, tier="episodic", intent="summary", kind="summary",
        session_id=session_id, importance=SUMMARY_IMPORTANCE,
        data={"text": text, "turns": folded},
        created_at=old[-1].created_at,
    )  # fmt: skip
    replaced = [r.id for r in old] + ([before.id] if before else [])
    await memory.store.replace_with_summary(replaced, summary)  # search sees it at once
    return summary
