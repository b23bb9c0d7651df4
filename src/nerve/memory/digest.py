"""What a past session did, in a few lines: the "recent session" item of a context (SPEC ME-6).

Read from the session's perception events (ME-4): its task (outcome_task), its outcome
(outcome_done: score and summary; "unfinished" when a task was set and never done), the files
read (eye_read) and edited or written (tongue_edit, tongue_write), the commands (body_bash) and
tools (body_tool) run, and its errors (nose_error); with the session's conversation summary
(ME-9) when it has one. Each list keeps its first occurrences in order, and the text shows the
first few with a count: "read 12 files: a.py, b.py, c.py +9".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from nerve.memory.model import Record

__all__ = ["EVENTS", "SessionDigest", "summarize_events"]

EVENTS = 500  # events read per session: the newest, plus its task when that is older
SHOWN = 3  # entries of each list in the text
KEPT = 20  # entries of each list in the JSON (the counts are complete)
ENTRY_CHARS = 80
TEXT_CHARS = 700


@dataclass(frozen=True, slots=True)
class SessionDigest:
    session_id: str
    task: str | None = None
    outcome: Literal["done", "unfinished"] | None = None  # None: no task, no outcome
    score: float | None = None
    result: str | None = None  # what outcome_done said
    summary: str | None = None  # the conversation summary (ME-9)
    read: list[str] = field(default_factory=list)
    edited: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def lists(self) -> dict[str, list[str]]:
        return {"read": self.read, "edited": self.edited, "commands": self.commands,
                "tools": self.tools, "errors": self.errors}  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.session_id, "task": self.task, "outcome": self.outcome,
            "score": self.score, "result": self.result, "summary": self.summary,
            **{name: items[:KEPT] for name, items in self.lists().items()},
            "counts": {name: len(items) for name, items in self.lists().items()},
        }  # fmt: skip

    def text(self) -> str:
        parts = []
        if self.task:
            parts.append(f'task "{_clip(self.task)}"')
        if self.outcome == "done":
            score = f", score {self.score:g}" if self.score is not None else ""
            result = f": {_clip(self.result)}" if self.result else ""
            parts.append(f"done{score}{result}")
        elif self.outcome == "unfinished":
            parts.append("unfinished")
        for verb, items, noun in (
            ("read", self.read, "file"), ("edited", self.edited, "file"),
            ("ran", self.commands, "command"), ("used", self.tools, "tool"),
            ("hit", self.errors, "error"),
        ):  # fmt: skip
            if items:
                parts.append(_listed(verb, items, noun))
        if self.summary:
            parts.append(f"conversation: {_clip(self.summary, 300)}")
        text = f"session {self.session_id}: " + ("; ".join(parts) or "no activity recorded")
        return text if len(text) <= TEXT_CHARS else text[: TEXT_CHARS - 1] + "…"


def summarize_events(
    session_id: str, events: Sequence[Record], summary: Record | None = None
) -> SessionDigest:
    """The digest of a session from its events (any order) and its latest summary."""
    lists: dict[str, list[str]] = {"read": [], "edited": [], "commands": [], "tools": [],
                                   "errors": []}  # fmt: skip
    task: Record | None = None
    done: Record | None = None
    for event in sorted(events, key=lambda r: (r.created_at, r.id)):  # ids: insertion order
        data, kind = event.data, event.intent
        if kind == "outcome_task":
            task = event
        elif kind == "outcome_done":
            done = event
        entry = _entry(kind, data)
        if entry is not None and entry[1] not in lists[entry[0]]:
            lists[entry[0]].append(entry[1])
    outcome: Literal["done", "unfinished"] | None = None
    if done is not None and (task is None or done.created_at >= task.created_at):
        outcome = "done"
    elif task is not None:
        outcome = "unfinished"
    task_text = _text(task.data.get("task")) if task else None
    if outcome == "done" and done is not None:
        task_text = task_text or _text(done.data.get("task"))
    score = done.data.get("score") if outcome == "done" and done is not None else None
    return SessionDigest(
        session_id,
        task=task_text,
        outcome=outcome,
        score=float(score) if isinstance(score, int | float) else None,
        result=_text(done.data.get("summary")) if outcome == "done" and done else None,
        summary=_text(summary.data.get("text")) if summary else None,
        **lists,
    )


def _entry(kind: str, data: dict[str, Any]) -> tuple[str, str] | None:
    """(list, entry) that an event adds to, if any."""
    if kind == "eye_read":
        return _keyed("read", data.get("path"))
    if kind in ("tongue_edit", "tongue_write"):
        return _keyed("edited", data.get("path"))
    if kind == "body_bash":
        command = _text(data.get("command"))
        code = data.get("exit_code")
        failed = f" (exit {code})" if isinstance(code, int) and code != 0 else ""
        return ("commands", command + failed) if command else None
    if kind == "body_tool":
        return _keyed("tools", data.get("tool"))
    if kind == "nose_error":
        return _keyed("errors", data.get("message"))
    return None


def _keyed(name: str, value: Any) -> tuple[str, str] | None:
    text = _text(value)
    return (name, text) if text else None


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = " ".join(str(value).split())
    return text or None


def _clip(text: str | None, limit: int = ENTRY_CHARS) -> str:
    text = text or ""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _listed(verb: str, items: list[str], noun: str) -> str:
    head = ", ".join(_clip(i) for i in items[:SHOWN])
    more = f" +{len(items) - SHOWN}" if len(items) > SHOWN else ""
    plural = noun if len(items) == 1 else noun + "s"
    return f"{verb} {len(items)} {plural}: {head}{more}"
