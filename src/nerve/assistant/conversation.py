"""A conversation's history in memory (SPEC ME-9): turns, the summary they fold into, usage.

A conversation is one user in one place: memory's session id is `<channel>:<chat_id>`, its
records belong to the user. Turns are memory records of kind "turn"; past `history_turns` the
older ones fold into one summary through the gateway. Summarising happens in one transaction
after the model answered: if it fails the turns stay, and the next turn tries again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from nerve.memory import Memory
from nerve.memory.store import Query
from nerve.memory.summaries import TURN_IMPORTANCE, Summarizer, summarize_session

__all__ = [
    "Conversation", "History", "compact", "load_history", "record_turn", "session_of",
    "text_summarizer",
]  # fmt: skip

log = logging.getLogger("nerve.assistant")


def session_of(channel: str, chat_id: str) -> str:
    return f"{channel}:{chat_id}"


@dataclass
class Conversation:
    """In-process state of one conversation: its lock (one turn at a time), tool scratch state
    (e.g. the MCP tools it enabled) and the tokens it used so far."""

    user_id: str
    session: str
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    state: dict[str, Any] = field(default_factory=dict)
    tokens: int = 0
    turns: int = 0
    last_at: float = 0.0


@dataclass(frozen=True)
class History:
    summary: str | None
    turns: list[dict[str, str]]  # {"role", "content"}, oldest first


async def load_history(memory: Memory | None, conv: Conversation, *, limit: int) -> History:
    """The summary of older turns and at most `limit` recent turns."""
    if memory is None:
        return History(None, [])
    turns = await memory.store.query(
        Query(conv.user_id, kind="turn", session_id=conv.session, limit=limit)
    )
    summaries = await memory.store.query(
        Query(conv.user_id, kind="summary", session_id=conv.session, limit=1)
    )
    summary = str(summaries[0].data.get("text", "")) if summaries else None
    ordered = sorted(turns, key=lambda r: r.created_at)
    return History(
        summary or None,
        [{"role": str(t.data.get("role", "user")), "content": str(t.data.get("content", ""))}
         for t in ordered],
    )  # fmt: skip


async def record_turn(
    memory: Memory | None, conv: Conversation, role: str, content: str, **extra: Any
) -> None:
    """Store one turn; turns of a conversation get strictly increasing times, so their order
    survives even when the clock does not move between them."""
    if memory is None:
        return
    at = max(memory.clock(), conv.last_at + 1e-6)
    conv.last_at = at
    await memory.store_memory(
        conv.user_id, tier="episodic", intent="conversation", kind="turn",
        session_id=conv.session, data={"role": role, "content": content, **extra},
        importance=max(TURN_IMPORTANCE, memory.threshold), created_at=at,
    )  # fmt: skip


async def compact(
    memory: Memory | None, conv: Conversation, summarizer: Summarizer, *, max_turns: int
) -> bool:
    """Fold older turns into the summary once there are more than `max_turns`. True when a
    summary was written; False when nothing was due or summarising failed (turns kept)."""
    if memory is None:
        return False
    try:
        summary = await summarize_session(
            memory, conv.user_id, conv.session, summarizer=summarizer,
            max_turns=max_turns, keep_recent=max(1, max_turns // 2),
        )  # fmt: skip
    except Exception as e:  # the turns are still there: the next turn tries again
        log.warning("summarising %s failed, its turns are kept: %s", conv.session, e)
        return False
    return summary is not None


def text_summarizer(
    ask: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]],
) -> Callable[..., Awaitable[str]]:
    """`model_summarizer` wants `ask(messages, model=) -> str`; the assistant has `ask(body)`."""

    async def ask_text(messages: list[dict[str, Any]], *, model: str = "auto") -> str:
        answer = await ask({"model": model, "messages": messages})
        content = answer["choices"][0]["message"].get("content")
        return content if isinstance(content, str) else ""

    return ask_text
