"""Prompt assembly (SPEC AS-2): the same layout every turn, so a model finds things in one place.

System message, in this order: persona, tool hints, the memory context block (ME-6), open
tasks, the summary of this conversation's older turns, the current time. Then the history
(recent turns, oldest first), then the current message with what the channel knows around it
(context, the quoted message, a note such as "delivered late").
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from typing import Any

from nerve.assistant.bus import Inbound

__all__ = ["PERSONA", "build_messages", "render_tasks", "system_prompt", "tool_hint", "user_text"]

PERSONA = (
    "You are nerve, a personal assistant. Answer briefly and plainly, in the user's language. "
    "Use a tool when it helps; a tool result that says it failed or was blocked is final for "
    "that call: explain it, or fix the arguments and try once more. Never invent tool results."
)
MAX_HINT_NAMES = 200


def tool_hint(native: Sequence[str], other_mcp: Sequence[str]) -> str:
    """One line per group: tools the model may call now, and MCP tools it can ask for."""
    lines = []
    if native:
        lines.append("Tools you can call now: " + ", ".join(native) + ".")
    if other_mcp:
        names = list(other_mcp)[:MAX_HINT_NAMES]
        more = len(other_mcp) - len(names)
        lines.append(
            "More tools from MCP servers, not loaded: " + ", ".join(names)
            + (f" (+{more} more)" if more > 0 else "")
            + '. To use some, call mcp_server(action="use_tools", tools=[...names]) first.'
        )  # fmt: skip
    return "\n".join(lines)


def render_tasks(tasks: Any) -> str:
    """Open tasks as lines: from a list of dicts/strings (or an already rendered string)."""
    if not tasks:
        return ""
    if isinstance(tasks, str):
        return tasks.strip()
    lines = []
    for task in tasks if isinstance(tasks, Iterable) else [tasks]:
        if isinstance(task, dict):
            title = task.get("title") or task.get("text") or task.get("content") or ""
            ident = task.get("id")
            lines.append(f"- {title}" + (f" (id {ident})" if ident else ""))
        else:
            lines.append(f"- {task}")
    return "\n".join(lines)


def system_prompt(
    *,
    persona: str = PERSONA,
    tools: str = "",
    memory_block: str = "",
    tasks: str = "",
    summary: str | None = None,
    now: dt.datetime | None = None,
) -> str:
    now = now or dt.datetime.now(dt.UTC)
    parts = [persona]
    if tools:
        parts.append(tools)
    # The memory block always sits here (ME-6), present or not, so its place never moves.
    parts.append(memory_block or "<memory>\nNothing remembered about this user yet.\n</memory>")
    if tasks:
        parts.append("<open_tasks>\n" + tasks + "\n</open_tasks>")
    if summary:
        parts.append("<conversation_summary>\n" + summary + "\n</conversation_summary>")
    parts.append(f"Current time: {now.isoformat(timespec='seconds')}")
    return "\n\n".join(parts)


def user_text(msg: Inbound) -> str:
    """The current message with what the channel knows around it."""
    parts = []
    if msg.context:
        parts.append(f"[context: {msg.context}]")
    if msg.note:
        parts.append(f"[note: {msg.note}]")
    if msg.quoted:
        parts.append("[replying to]\n" + "\n".join("> " + line for line in msg.quoted.splitlines()))
    parts.append(msg.text)
    return "\n".join(parts)


def build_messages(
    system: str, history: Sequence[dict[str, str]], msg: Inbound
) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}]
    messages += [{"role": h["role"], "content": h["content"]} for h in history]
    messages.append({"role": "user", "content": user_text(msg)})
    return messages
