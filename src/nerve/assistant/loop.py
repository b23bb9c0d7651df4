"""The tool-call loop: ask the model, run the tools it calls, repeat until it answers.

One round is one model call; the tool calls of a round run concurrently, each through the
registry's chokepoint (`ToolRegistry.execute`: validate → safety → run, never raises), and
their results (errors and refusals included) go back to the model as tool messages. Results
older than the last round are shortened to a line before each call, to save tokens. The loop
ends with the model's answer, or with a clear message at `max_rounds`, at the per-turn token
cap, or when the model cannot be reached (a NerveError after the gateway's own retries).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from nerve.assistant.streaming import Delta, StreamFn
from nerve.errors import NerveError
from nerve.tools import ToolContext, ToolRegistry, ToolResult

__all__ = ["ChatFn", "Loop", "LoopResult", "ToolCall", "estimate_tokens", "shorten_old_results"]

log = logging.getLogger("nerve.assistant")
ChatFn = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
Stop = Literal["answer", "max_rounds", "token_cap", "provider_error", "bad_answer"]
KEEP_CHARS = 160  # what remains of an old tool result


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: str
    result: ToolResult


@dataclass
class LoopResult:
    text: str
    stop: Stop
    rounds: int = 0
    tokens: int = 0
    files: tuple[str, ...] = ()
    calls: list[ToolCall] = field(default_factory=list)


def estimate_tokens(payload: Any) -> int:
    """About four characters of JSON per token: what is sent when no usage came back."""
    return len(json.dumps(payload, ensure_ascii=False, default=str)) // 4 + 1


def shorten_old_results(messages: list[dict[str, Any]], keep_from: int) -> None:
    """Shorten tool results before index `keep_from` (earlier rounds) to one line, in place."""
    for i in range(keep_from):
        message = messages[i]
        content = message.get("content")
        if message.get("role") == "tool" and isinstance(content, str) and not message.get("_short"):
            if len(content) > KEEP_CHARS:
                head = content[:KEEP_CHARS]
                message["content"] = f"[earlier tool result, {len(content)} chars] {head}…"
            message["_short"] = True


def _wire(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in m.items() if not k.startswith("_")} for m in messages]


def _usage(answer: dict[str, Any], sent: list[dict[str, Any]]) -> int:
    usage = answer.get("usage")
    if isinstance(usage, dict):
        total = usage.get("total_tokens")
        if isinstance(total, int):
            return total
        parts = [usage.get("prompt_tokens"), usage.get("completion_tokens")]
        if all(isinstance(p, int) for p in parts):
            return sum(p for p in parts if isinstance(p, int))
    return estimate_tokens(sent) + estimate_tokens(answer.get("choices"))


class Loop:
    def __init__(
        self,
        ask: ChatFn,
        tools: ToolRegistry,
        *,
        model: str,
        max_rounds: int,
        max_tokens: int,
        ask_stream: StreamFn | None = None,
    ) -> None:
        self.ask = ask
        self.ask_stream = ask_stream  # for a channel that shows the answer as it is written
        self.tools = tools
        self.model = model
        self.max_rounds = max_rounds
        self.max_tokens = max_tokens

    async def run(
        self,
        messages: list[dict[str, Any]],
        schemas: Callable[[], list[dict[str, Any]]],
        ctx: ToolContext,
        on_delta: Delta | None = None,
    ) -> LoopResult:
        """`schemas()` gives the tools offered, asked again each round; with `on_delta` (and
        `ask_stream`) each round's text goes to it as the model writes it."""
        result = LoopResult("", "answer")
        keep_from = len(messages)
        while True:
            if result.rounds >= self.max_rounds:
                return self._stopped(result, "max_rounds")
            shorten_old_results(messages, keep_from)
            body: dict[str, Any] = {"model": self.model, "messages": _wire(messages)}
            offered = schemas()
            if offered:
                body["tools"] = offered
            if result.tokens and result.tokens + estimate_tokens(body) > self.max_tokens:
                return self._stopped(result, "token_cap")
            try:
                if on_delta is not None and self.ask_stream is not None:
                    answer = await self.ask_stream(body, on_delta)
                else:
                    answer = await self.ask(body)
            except NerveError as e:
                log.warning("the model could not be reached: %s", e.message)
                result.text = (
                    f"Sorry, I could not reach the language model: {e.message} "
                    "Please try again in a moment."
                )
                result.stop = "provider_error"
                return result
            result.rounds += 1
            result.tokens += _usage(answer, body["messages"])
            try:
                message = answer["choices"][0]["message"]
                calls = [c for c in message.get("tool_calls") or [] if isinstance(c, dict)]
            except (LookupError, TypeError, AttributeError):
                result.text, result.stop = (
                    "Sorry, the model sent an answer I cannot read.",
                    "bad_answer",
                )
                return result
            if not calls:
                text = message.get("content") or message.get("refusal") or ""
                result.text = text if isinstance(text, str) and text else "(no answer)"
                return result
            if result.tokens >= self.max_tokens:
                return self._stopped(result, "token_cap")
            keep_from = len(messages)
            messages.append(_assistant_message(message, calls))
            messages += await self._run_tools(calls, ctx, result)

    async def _run_tools(
        self, calls: list[dict[str, Any]], ctx: ToolContext, result: LoopResult
    ) -> list[dict[str, Any]]:
        async def one(call: dict[str, Any]) -> tuple[str, str, str, ToolResult]:
            fn, ident = call.get("function"), str(call.get("id", ""))
            if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
                return ident, "?", "", ToolResult.failure("malformed tool call: no function name")
            args = fn.get("arguments")
            args_text = args if isinstance(args, str) else json.dumps(args or {})
            try:
                outcome = await self.tools.execute(fn["name"], args_text, ctx)
            except Exception as e:  # the chokepoint never raises; if it did, still data
                log.exception("tool %s raised through the registry", fn["name"])
                outcome = ToolResult.failure(f"{type(e).__name__}: {e}")
            return ident, fn["name"], args_text, outcome

        done = await asyncio.gather(*(one(c) for c in calls))
        replies = []
        for ident, name, args_text, outcome in done:
            result.calls.append(ToolCall(name, args_text, outcome))
            result.files += tuple(f for f in outcome.files if f not in result.files)
            replies.append({"role": "tool", "tool_call_id": ident, "content": outcome.for_model()})
        return replies

    def _stopped(self, result: LoopResult, why: Stop) -> LoopResult:
        used = ", ".join(sorted({c.name for c in result.calls})) or "none"
        if why == "max_rounds":
            result.text = (
                f"I stopped after {result.rounds} rounds of tool calls without reaching an answer "
                f"(the limit is assistant.max_rounds = {self.max_rounds}). Tools used: {used}. "
                "Tell me how to narrow the request, or ask me to continue."
            )
        else:
            result.text = (
                f"I stopped this turn: it used about {result.tokens} tokens and the next step "
                f"would pass the limit of {self.max_tokens} per turn "
                f"(assistant.max_tokens_per_turn). Tools used: {used}."
            )
        result.stop = why
        return result


def _assistant_message(message: dict[str, Any], calls: list[dict[str, Any]]) -> dict[str, Any]:
    """The model's tool-calling message as it goes back on the wire (arguments as JSON text)."""
    wire_calls = []
    for call in calls:
        if not isinstance(call, dict):
            continue
        fn = dict(call.get("function") or {})
        if not isinstance(fn.get("arguments"), str):
            fn["arguments"] = json.dumps(fn.get("arguments") or {})
        wire_calls.append({"id": call.get("id", ""), "type": "function", "function": fn})
    return {"role": "assistant", "content": message.get("content"), "tool_calls": wire_calls}
