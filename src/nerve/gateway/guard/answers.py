"""Non-streamed answers: find each tool call, judge them together, rewrite what is blocked.

    chat        choices[].message.tool_calls[] (and the legacy function_call): a blocked call is
                removed and its notice added to the message's content; with no call left the
                finish_reason tool_calls becomes stop
    messages    content[] tool_use blocks: a blocked block becomes a text block in its place;
                with no tool_use left stop_reason tool_use becomes end_turn
    responses   output[] function_call, custom_tool_call and local_shell_call items: a blocked
                item becomes an assistant message item in its place

`rewrite` returns the new body, or None when nothing was replaced (the caller then sends the
bytes it was given, so an answer the guard leaves alone is unchanged to the byte).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from nerve.gateway.guard.judged import CallJudge, Format, Judged

__all__ = ["MARKERS", "call_of", "message_item", "replacement_id", "rewrite"]

# A body without one of these bytes has no tool call to judge: it is not even parsed.
MARKERS: dict[Format, tuple[bytes, ...]] = {
    "chat": (b'"tool_calls"', b'"function_call"'),
    "messages": (b'"tool_use"',),
    "responses": (b'"function_call"', b'"custom_tool_call"', b'"local_shell_call"'),
}
JSON = dict[str, Any]


@dataclass(slots=True)
class _Site:
    """One call in the answer: what to judge, and how to put a notice in its place."""

    name: str
    arguments: object
    freeform: bool
    call_id: str | None
    replace: Callable[[str], None]
    judged: Judged | None = None


async def rewrite(
    fmt: Format, data: JSON, judge: CallJudge, *, block: bool
) -> tuple[JSON | None, list[Judged]]:
    """`(new body or None, the calls the engine would block)`."""
    sites, finish = _SITES[fmt](data)
    calls = [judge(s.name, s.arguments, freeform=s.freeform, call_id=s.call_id) for s in sites]
    # Together, so an LLM judge is asked about every call at once; one call needs no task.
    verdicts = [await calls[0]] if len(calls) == 1 else await asyncio.gather(*calls)
    hits: list[Judged] = []
    for site, judged in zip(sites, verdicts, strict=True):
        if judged is not None and not judged.allowed:
            hits.append(judged)
            site.judged = judged
    if not block or not hits:
        return None, hits
    for site in sites:
        if site.judged is not None:
            site.replace(site.judged.notice())
    finish()
    return data, hits


def _objects(value: Any) -> list[JSON]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _object(value: Any) -> JSON:
    return value if isinstance(value, dict) else {}


def _id(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _chat(data: JSON) -> tuple[list[_Site], Callable[[], None]]:
    sites: list[_Site] = []
    choices = _objects(data.get("choices"))
    notes: dict[int, list[str]] = {}  # per choice (its position), the notices to add
    dropped: dict[int, list[JSON]] = {}

    def drop(pos: int, call: JSON | None) -> Callable[[str], None]:
        def replace(notice: str) -> None:
            notes.setdefault(pos, []).append(notice)
            if call is not None:
                dropped.setdefault(pos, []).append(call)
            else:  # the legacy single call
                _object(choices[pos].get("message")).pop("function_call", None)

        return replace

    for pos, choice in enumerate(choices):
        message = _object(choice.get("message"))
        for call in _objects(message.get("tool_calls")):
            fn = _object(call.get("function"))
            name = str(fn.get("name") or "")
            sites.append(_Site(name, fn.get("arguments"), False, _id(call.get("id")),
                               drop(pos, call)))  # fmt: skip
        legacy = message.get("function_call")
        if isinstance(legacy, dict):
            name = str(legacy.get("name") or "")
            sites.append(_Site(name, legacy.get("arguments"), False, None, drop(pos, None)))

    def finish() -> None:
        for pos, texts in notes.items():
            choice = choices[pos]
            message = _object(choice.get("message"))
            gone = dropped.get(pos, [])
            kept = [c for c in _objects(message.get("tool_calls")) if not any(c is g for g in gone)]
            if kept:
                message["tool_calls"] = kept
            else:
                message.pop("tool_calls", None)
                if "function_call" not in message and choice.get("finish_reason") in (
                    "tool_calls", "function_call"
                ):  # fmt: skip
                    choice["finish_reason"] = "stop"
            message["content"] = _append(message.get("content"), "\n".join(texts))

    return sites, finish


def _append(content: Any, text: str) -> Any:
    if isinstance(content, list):  # content parts, as a few servers answer
        return [*content, {"type": "text", "text": text}]
    if isinstance(content, str) and content:
        return f"{content}\n\n{text}"
    return text


def _messages(data: JSON) -> tuple[list[_Site], Callable[[], None]]:
    sites: list[_Site] = []
    content = data.get("content")
    blocks = content if isinstance(content, list) else []

    def put(pos: int) -> Callable[[str], None]:
        def replace(notice: str) -> None:
            blocks[pos] = {"type": "text", "text": notice}

        return replace

    for pos, block in enumerate(blocks):
        if isinstance(block, dict) and block.get("type") == "tool_use":
            sites.append(_Site(str(block.get("name") or ""), block.get("input"), False,
                               _id(block.get("id")), put(pos)))  # fmt: skip

    def finish() -> None:
        tools = any(isinstance(b, dict) and b.get("type") == "tool_use" for b in blocks)
        if not tools and data.get("stop_reason") == "tool_use":
            data["stop_reason"] = "end_turn"

    return sites, finish


def call_of(item: JSON) -> tuple[str, object, bool] | None:
    """A Responses output item's call as `(name, arguments, freeform)`; None: not a call."""
    kind = item.get("type")
    if kind == "function_call":
        return str(item.get("name") or ""), item.get("arguments"), False
    if kind == "custom_tool_call":
        raw = item.get("input")
        return str(item.get("name") or ""), raw if isinstance(raw, str) else "", True
    if kind == "local_shell_call":
        return "local_shell", {"command": _object(item.get("action")).get("command")}, False
    return None


def message_item(item_id: str, text: str) -> JSON:
    """The assistant message a blocked Responses call is replaced with."""
    part = {"type": "output_text", "text": text, "annotations": []}
    return {"type": "message", "id": item_id, "role": "assistant", "status": "completed",
            "content": [part]}  # fmt: skip


def replacement_id(item: JSON) -> str:
    """The message item's id, made from the call's so a stream and its final output agree."""
    return "msg_nerve_" + str(item.get("id") or item.get("call_id") or "call")


def _responses(data: JSON) -> tuple[list[_Site], Callable[[], None]]:
    sites: list[_Site] = []
    output = data.get("output")
    items = output if isinstance(output, list) else []

    def put(pos: int, item: JSON) -> Callable[[str], None]:
        def replace(notice: str) -> None:
            items[pos] = message_item(replacement_id(item), notice)

        return replace

    for pos, item in enumerate(items):
        call = call_of(item) if isinstance(item, dict) else None
        if call is not None:
            name, arguments, freeform = call
            sites.append(_Site(name, arguments, freeform, _id(item.get("call_id")), put(pos, item)))
    return sites, lambda: None


_SITES: dict[Format, Callable[[JSON], tuple[list[_Site], Callable[[], None]]]] = {
    "chat": _chat,
    "messages": _messages,
    "responses": _responses,
}
