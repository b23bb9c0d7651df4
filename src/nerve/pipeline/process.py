"""The process pipeline (SPEC PR-1): language → intent → safety → execute → memory.

`Pipeline.process` is the one function behind `POST /api/process`, `nerve process` and (later)
the MCP `process` tool. It never executes a request the safety engine did not allow, never
raises for bad text (it answers `unknown`), and a failing handler or memory hook becomes data in
the result, not an exception. A handler runs as a hidden tool of the one `ToolRegistry`
(handlers.py), through its `execute`: the chokepoint every tool passes.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from nerve.errors import RequestError
from nerve.intent import Intent, IntentClassifier
from nerve.language import LanguageResult, detect
from nerve.pipeline.handlers import UNDERSTOOD, Handler, Understood, intent_tool, tool_name
from nerve.safety import INTENT_RISK, SafetyEngine, Verdict
from nerve.safety.record import record
from nerve.tools import Services, ToolContext, ToolRegistry

__all__ = ["MAX_TEXT_CHARS", "Delegate", "MemoryHook", "Pipeline", "ProcessResult"]

log = logging.getLogger("nerve.pipeline")
MAX_TEXT_CHARS = 100_000
MemoryHook = Callable[[Understood, Verdict, dict[str, Any] | None], Awaitable[None]]
# (task, payload) -> an agent's route result {"success", "agent", "result" | "error"}, or None
# when no agent takes the task. Injected (the agent registry's `delegate`); never imported here.
Delegate = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any] | None]]


@dataclass(frozen=True, slots=True)
class ProcessResult:
    language: LanguageResult
    intent: Intent
    safety: Verdict
    execution: dict[str, Any] | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "language": self.language.to_dict(),
            "intent": self.intent.to_dict(),
            "safety": self.safety.to_dict(),
            "execution": self.execution,
        }


class Pipeline:
    def __init__(
        self,
        *,
        intents: IntentClassifier,
        safety: SafetyEngine,
        tools: ToolRegistry | None = None,
        services: Services | None = None,
        memory: MemoryHook | None = None,
        delegate: Delegate | None = None,
    ) -> None:
        self.intents = intents
        self.safety = safety
        self.tools = tools if tools is not None else ToolRegistry()
        self.services = services or Services(safety=safety)
        self.memory = memory
        self.delegate = delegate

    def handle(
        self, intent: str, handler: Handler, *, retries: int = 2, timeout_seconds: float = 60.0
    ) -> None:
        """Run `handler` for `intent` (it replaces an earlier one): a hidden tool in `tools`."""
        self.tools.register(
            intent_tool(intent, handler, retries=retries, timeout_seconds=timeout_seconds)
        )

    async def process(
        self, text: str, user_id: str = "anonymous", *, execute: bool = True
    ) -> ProcessResult:
        if not isinstance(text, str):
            raise RequestError("'text' must be a string", param="text")
        if len(text) > MAX_TEXT_CHARS:
            raise RequestError(
                f"'text' is {len(text)} characters; the limit is {MAX_TEXT_CHARS}", param="text"
            )
        language = detect(text)
        intent = await self.intents.classify(
            text, normalized_text=language.normalized_text, languages=language.languages
        )
        # A recognised dangerous action (drop_database, system_shutdown) is judged by its own risk.
        action = intent.parameters.get("action")
        risk_intent = action if isinstance(action, str) and action in INTENT_RISK else intent.intent
        verdict = await self.safety.check("text", text, intent=risk_intent)
        record(verdict, source="pipeline", check="text", subject=text, user_id=user_id,
               intent=intent.intent)  # fmt: skip
        understood = Understood(text, user_id, language, intent)
        execution: dict[str, Any] | None = None
        if not verdict.allowed:
            execution = {"status": "blocked", "executed": False, "reason": verdict.reason}
        elif execute:
            execution = await self._execute(understood)
        if self.memory is not None:
            try:
                await self.memory(understood, verdict, execution)
            except Exception:
                log.exception("the memory hook failed; the result is returned anyway")
        return ProcessResult(language, intent, verdict, execution)

    async def _execute(self, request: Understood) -> dict[str, Any]:
        """An agent registered for the intent runs it first; the local handler is the fallback.
        `executed_by` ("agent:<name>" or "local") is there whenever an agent was tried."""
        routed = await self._delegated(request)
        if routed is not None and routed.get("success"):
            return {"status": "ok", "executed": True, "executed_by": f"agent:{routed['agent']}",
                    "result": routed.get("result")}  # fmt: skip
        execution = await self._run_local(request)
        if routed is not None:
            local = execution["status"] != "no_handler"
            execution.update(executed_by="local" if local else None, agent_error=routed["error"])
        return execution

    async def _delegated(self, request: Understood) -> dict[str, Any] | None:
        if self.delegate is None:
            return None
        payload = {
            "text": request.text,
            "user_id": request.user_id,
            "language": request.language.to_dict(),
            "intent": request.intent.to_dict(),
        }
        try:
            return await self.delegate(request.intent.intent, payload)
        except Exception as e:
            log.exception("delegating %s to an agent failed", request.intent.intent)
            return {"success": False, "agent": None, "error": f"delegation failed: {e}"}

    async def _run_local(self, request: Understood) -> dict[str, Any]:
        name = tool_name(request.intent.intent)
        if name not in self.tools:
            return {
                "status": "no_handler",
                "executed": False,
                "message": f"no handler is registered for intent '{request.intent.intent}'",
            }
        ctx = ToolContext(request.user_id, channel="process", services=self.services)
        ctx.state[UNDERSTOOD] = request
        done = await self.tools.execute(name, {"text": request.text}, ctx)
        if done.ok:
            return {"status": "ok", "executed": True, "attempts": done.attempts,
                    "result": done.content}  # fmt: skip
        return {"status": "failed", "executed": False, "attempts": done.attempts,
                "error": done.error}  # fmt: skip
