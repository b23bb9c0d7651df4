"""What `process` runs once a request is understood and allowed: one hidden tool per intent.

An intent handler is an async function of the understood request. `intent_tool` makes it a
`Tool` named `intent_<intent>` for the one registry (`nerve.tools.ToolRegistry`), so the
pipeline executes it through the same chokepoint as every other tool (timeout, retries,
failures as data). The tool is hidden: no model is offered it. Registering another handler for
the same intent replaces the first.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from nerve.intent import Intent
from nerve.language import LanguageResult
from nerve.tools import Tool, ToolContext, ToolError

__all__ = ["UNDERSTOOD", "Handler", "Understood", "intent_tool", "tool_name"]

UNDERSTOOD = "understood"  # where the request rides in ToolContext.state


@dataclass(frozen=True, slots=True)
class Understood:
    """A request after language and intent: what a handler receives."""

    text: str
    user_id: str
    language: LanguageResult
    intent: Intent


Handler = Callable[[Understood], Awaitable[dict[str, Any]]]
_PARAMETERS = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
}


def tool_name(intent: str) -> str:
    return f"intent_{intent}"


def intent_tool(
    intent: str, handler: Handler, *, retries: int = 2, timeout_seconds: float = 60.0
) -> Tool:
    """`handler` as the hidden tool the pipeline runs for `intent`."""

    async def call(args: dict[str, Any], ctx: ToolContext) -> Any:
        understood = ctx.state.get(UNDERSTOOD)
        if not isinstance(understood, Understood) or understood.text != args["text"]:
            raise ToolError(f"{tool_name(intent)} runs only from the pipeline")
        return await handler(understood)

    return Tool.from_schema(
        tool_name(intent),
        f"Handle the intent {intent} (run by the pipeline, offered to no model).",
        _PARAMETERS,
        call,
        timeout=timeout_seconds,
        retries=retries,
        hidden=True,
    )
