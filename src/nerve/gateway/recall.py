"""Memory for any client on the gateway path (SPEC TP-2): recall before routing, store after.

Per route (and per key, overriding it) `memory: {recall, store}` turns on two things for the
user a request acts for (`path_user`):

- recall: the ME-6 context block (`build_context`, the one `/api/memory/context` and the MCP
  `memory_context` tool return) for the person's last message is added to the request as a
  system prompt, at its end (`with_context`), so the client's own prompt stays a cached prefix.
- store: after the answer, the exchange (the person's message, the answer's text) is written
  as conversation turns, as the assistant writes them, in a background task.

Memory is never why a call fails: a broken or slow store is logged and counted (`stats`), and
the request goes on as the client sent it. State is in the store only, so a turn one process
stores is recalled by any other on the same database.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any

from nerve.access.principal import Principal
from nerve.gateway.recall_text import MAX_CHARS, Asked, TextTap, answer_text, asked
from nerve.memory.context import Context, build_context, render
from nerve.memory.fields import MAX_USER_ID, text_problem
from nerve.memory.service import Memory
from nerve.memory.summaries import TURN_IMPORTANCE

__all__ = ["USER_HEADER", "PathMemory", "TextTap", "answer_text", "path_user", "with_context"]

log = logging.getLogger("nerve.gateway")
USER_HEADER = "x-nerve-user"


def path_user(
    principal: Principal, headers: Mapping[str, str], view: Mapping[str, Any]
) -> str | None:
    """Whose memory a request uses, or None for none.

    A key bound to one user (`users: [asha]`) always acts for it: what the request says is not
    asked. Otherwise the request names its user: the `x-nerve-user` header, else the body's
    (the view's `user`: OpenAI's `user`, Responses' `user` or `safety_identifier`, Anthropic's
    `metadata.user_id`). A key with several users must name one of them, and a key with none
    gets no memory: no memory rather than a 403, since memory is an extra on this path and the
    call itself is allowed. A name memory could not keep (blank, too long, control characters)
    is no user.
    """
    users = principal.users
    if users is not None and len(users) == 1:
        return _name(users[0])
    named = _name(headers.get(USER_HEADER)) or _name(view.get("user"))
    if users is None or named in users:
        return named
    return None


def _name(value: Any) -> str | None:
    if not isinstance(value, str) or len(value) > MAX_USER_ID or text_problem(value, blank=False):
        return None
    return value.strip()


def with_context(dialect: str, body: dict[str, Any], block: str) -> dict[str, Any]:
    """`body` with `block` at the end of its system prompt; `body` itself is not changed.

    Providers cache prompts by prefix, so the block (which changes with every question) goes
    after the client's system prompt and before the conversation: chat gets a system message
    after its leading system/developer messages (a developer one where the client uses that
    role); Messages gets a text block after its `system` blocks, which keeps their
    `cache_control` breakpoints (a string `system` gets the block appended to it); Responses
    gets it appended to `instructions`, the prompt's first part, which a translation turns into
    the leading system message, so each provider sees it where chat puts it.
    """
    if not block:
        return body
    if dialect == "chat":
        messages = body.get("messages")
        messages = messages if isinstance(messages, list) else []
        lead = 0
        while lead < len(messages) and _role(messages[lead]) in ("system", "developer"):
            lead += 1
        role = "developer" if lead and _role(messages[lead - 1]) == "developer" else "system"
        added = {"role": role, "content": block}
        return {**body, "messages": [*messages[:lead], added, *messages[lead:]]}
    if dialect == "messages":
        system = body.get("system")
        if isinstance(system, list):
            return {**body, "system": [*system, {"type": "text", "text": block}]}
        return {**body, "system": f"{system}\n\n{block}" if system else block}
    if dialect == "responses":
        instructions = body.get("instructions")
        return {**body, "instructions": f"{instructions}\n\n{block}" if instructions else block}
    raise ValueError(f"path memory knows no dialect {dialect!r}")


def _role(message: Any) -> Any:
    return message.get("role") if isinstance(message, dict) else None


class PathMemory:
    """Recall and store for the gateway's endpoints. `memory()` is the server's memory now:
    None while it is disabled or closed, and then nothing happens (and nothing is counted)."""

    def __init__(
        self,
        memory: Callable[[], Memory | None],
        *,
        max_contexts: int = 5,
        recall_seconds: float = 2.0,
        max_pending: int = 1000,
        count: Callable[[str, int], None] | None = None,
    ) -> None:
        self._memory = memory
        self._count = count  # also told each event (the gateway's shared stats count them)
        self.max_contexts = max_contexts
        self.recall_seconds = recall_seconds  # a slow store delays a call this long at most
        self.max_pending = max_pending  # stores waiting beyond this are dropped, and counted
        self._pending: set[asyncio.Task[None]] = set()
        self.recalls = 0  # recalls that added a block
        self.recalled = 0  # items those blocks held
        self.stored = 0  # turns written
        self.failures = 0  # recalls and stores that failed or timed out
        self.dropped = 0  # stores not attempted: too many were waiting

    def _add(self, name: str, n: int) -> None:
        setattr(self, name, getattr(self, name) + n)
        if self._count is not None:
            self._count(name, n)

    def stats(self) -> dict[str, int]:
        return {
            "recalls": self.recalls, "recalled": self.recalled, "stored": self.stored,
            "failures": self.failures, "dropped": self.dropped, "pending": len(self._pending),
        }  # fmt: skip

    async def recall(
        self, dialect: str, body: dict[str, Any], user: str
    ) -> tuple[dict[str, Any], int]:
        """`body` with the user's context block added, and how many items it holds; `body`
        unchanged and 0 when there is nothing to add or memory failed. Never raises."""
        memory = self._memory()
        if memory is None:
            return body, 0
        try:
            question = asked(dialect, body)
            async with asyncio.timeout(self.recall_seconds):
                built = await build_context(
                    memory, user, session_id=question.session, query=question.text,
                    max_contexts=self.max_contexts,
                )  # fmt: skip
            built = _elsewhere(built, question)
            if not built.items:
                return body, 0
            added = with_context(dialect, body, built.prompt_block)
        except Exception as e:  # TimeoutError too: the call goes on without memory
            self._add("failures", 1)
            log.warning("path memory: recall for %r failed, the call goes on without it: %r",
                        user, e)  # fmt: skip
            return body, 0
        self._add("recalls", 1)
        self._add("recalled", len(built.items))
        return added, len(built.items)

    def store_later(self, user: str, dialect: str, body: dict[str, Any], answer: str) -> None:
        """Store the exchange `body` asked and `answer` gave, in the background. Never raises.

        The person's message is stored when the request ends with it; a tool round (it ends
        with a tool's result) stores only the answer, so an agent loop stores its question once.
        """
        if len(self._pending) >= self.max_pending:
            self._add("dropped", 1)
            log.warning("path memory: %d stores are waiting; this one is dropped", self.max_pending)
            return
        try:
            task = asyncio.get_running_loop().create_task(self._store(user, dialect, body, answer))
        except Exception as e:  # no running loop: a caller's bug, still not the client's problem
            self._add("failures", 1)
            log.warning("path memory: could not schedule a store: %r", e)
            return
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def _store(self, user: str, dialect: str, body: dict[str, Any], answer: str) -> None:
        try:
            memory = self._memory()
            if memory is None:
                return
            question = asked(dialect, body)
            turns = [("user", question.text)] if question.fresh else []
            turns.append(("assistant", answer[:MAX_CHARS]))
            at = memory.clock()
            for role, text in turns:
                text = text.replace("\x00", "")  # the one character no store keeps
                if not text.strip():
                    continue
                # As the assistant writes turns (record_turn): the answer strictly after the
                # question, so their order survives a clock that did not move.
                await memory.store_memory(
                    user, tier="episodic", intent="conversation", kind="turn",
                    session_id=question.session, data={"role": role, "content": text},
                    importance=max(TURN_IMPORTANCE, memory.threshold), created_at=at,
                )  # fmt: skip
                at += 1e-6
                self._add("stored", 1)
        except Exception as e:
            self._add("failures", 1)
            log.warning("path memory: storing %r's turns failed: %r", user, e)

    def text_tap(self, dialect: str) -> TextTap:
        """A tap for one stream's frames; its `text` is the answer so far."""
        return TextTap(dialect)

    async def idle(self) -> None:
        """Wait until every store scheduled so far is done (tests, shutdown)."""
        while self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)


def _elsewhere(built: Context, question: Asked) -> Context:
    """The context without this conversation's own turns: the client sends those itself, so
    they would only repeat what the model is reading, in the slots of something it is not."""
    own = question.session
    items = [i for i in built.items if i.record.kind != "turn" or i.record.session_id != own]
    return built if len(items) == len(built.items) else Context(items, render(items))
