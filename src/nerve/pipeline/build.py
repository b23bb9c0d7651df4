"""Wires a Pipeline from the config, with the gateway's `ask` injected for the LLM paths.

Lower layers never import the gateway: intent gets an `llm` callable, safety a `judge`, and the
answering handler an `ask`; each is None when its route is not configured.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import orjson

from nerve.config import Config
from nerve.intent import IntentClassifier
from nerve.intent.llm import response_format
from nerve.pipeline.handlers import Handler, Understood, intent_tool, tool_name
from nerve.pipeline.process import Delegate, MemoryHook, Pipeline
from nerve.safety import Kind, SafetyEngine, Verdict
from nerve.tools import Services, ToolRegistry

__all__ = ["ANSWERED_INTENTS", "Ask", "answer_handler", "build_pipeline"]

log = logging.getLogger("nerve.pipeline")
Ask = Callable[..., Awaitable[str]]  # gateway.ask(messages, model=..., **extra) -> text

ANSWERED_INTENTS = ("explain", "summarize", "generate_report", "query_data")
JUDGE_PROMPT = (
    "You are a safety reviewer for actions an AI agent is about to take. Answer only with JSON "
    '{"safe": true|false, "reason": "..."}. Unsafe means destructive, irreversible or harmful '
    "to data, systems or people."
)


def answer_handler(ask: Ask, *, model: str) -> Handler:
    """Answers the request with a model through the gateway."""

    async def answer(request: Understood) -> dict[str, Any]:
        text = await ask([{"role": "user", "content": request.text}], model=model)
        return {"answer": text}

    return answer


def llm_judge(ask: Ask, *, model: str) -> Callable[[Kind, str], Awaitable[tuple[bool, str]]]:
    async def judge(kind: Kind, content: str) -> tuple[bool, str]:
        messages = [
            {"role": "system", "content": JUDGE_PROMPT},
            {"role": "user", "content": f"kind: {kind}\n---\n{content}"},
        ]
        raw = await ask(messages, model=model, response_format={"type": "json_object"})
        data = orjson.loads(raw.strip().removeprefix("```json").removesuffix("```"))
        if not isinstance(data, dict) or not isinstance(data.get("safe"), bool):
            raise ValueError("the judge did not answer {safe, reason}")
        return data["safe"], str(data.get("reason") or "")

    return judge


Remember = Callable[[str, str, dict[str, Any]], Awaitable[None]]  # (text, user_id, summary)


def memory_hook(remember: Remember) -> MemoryHook:
    """What `process` keeps of each request: the text, what it meant, what happened."""

    async def hook(request: Understood, verdict: Verdict, execution: dict[str, Any] | None) -> None:
        languages = request.language.languages
        await remember(request.text, request.user_id, {
            "intent": request.intent.intent,
            "parameters": request.intent.parameters,
            "language": languages[0] if languages else None,
            "allowed": verdict.allowed,
            "status": (execution or {}).get("status", "not_executed"),
        })  # fmt: skip

    return hook


def build_pipeline(
    config: Config,
    ask: Ask | None,
    *,
    remember: Remember | None = None,
    delegate: Delegate | None = None,
    tools: ToolRegistry | None = None,
) -> Pipeline:
    """`delegate` (the agent registry's) lets a registered agent run an intent before the
    local handler. `tools` is the server's one registry: the answering handlers are (re)placed
    there as hidden tools, and removed when `pipeline.answer_model` is unset (a reload)."""
    intent_route = config.intent.llm_route
    llm = None
    if ask is not None and intent_route:
        fmt = response_format()

        async def llm_call(messages: list[dict[str, Any]]) -> str:
            return await ask(messages, model=intent_route, response_format=fmt)

        llm = llm_call
    intents = IntentClassifier(
        llm=llm,
        timeout=config.intent.timeout_seconds,
        min_confidence=config.intent.min_confidence,
    )
    judge = None
    if ask is not None and config.safety.llm_judge:
        judge = llm_judge(ask, model=config.safety.llm_judge)
    safety = SafetyEngine(strict=config.safety.strict, judge=judge)
    registry = tools if tools is not None else ToolRegistry()
    model = config.pipeline.answer_model
    for intent in ANSWERED_INTENTS:
        if ask is not None and model:
            registry.register(intent_tool(intent, answer_handler(ask, model=model)))
        else:
            registry.unregister(tool_name(intent))
    memory = memory_hook(remember) if remember is not None and config.memory.enabled else None
    services = Services(safety=safety, config=config)
    return Pipeline(
        intents=intents, safety=safety, tools=registry, services=services, memory=memory,
        delegate=delegate,
    )  # fmt: skip
