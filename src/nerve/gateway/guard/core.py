"""ToolGuard: one guard per configuration, judging the tool calls of answers and streams.

The verdict is always the safety engine's (`SafetyEngine.check`, the same chokepoint every
other tool call in nerve passes); the guard only finds the calls, says what to judge (policy),
and rewrites what is blocked (answers, the *_stream modules).

A failure inside the guard never raises into the response path. A call it cannot read is
blocked ("could not read this call"), as the engine fails closed. Should rewriting an answer
fail, `block` mode sends a plain assistant answer saying its tool calls were withheld, and
`flag` mode the answer unchanged; either way `GuardOutcome.error` says so.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import orjson

from nerve.config_sections import GuardConfig
from nerve.gateway.guard.answers import MARKERS, message_item, rewrite
from nerve.gateway.guard.chat_stream import ChatStream
from nerve.gateway.guard.judged import Format, GuardOutcome, Judged
from nerve.gateway.guard.messages_stream import MessagesStream
from nerve.gateway.guard.policy import ToolTable, subject
from nerve.gateway.guard.responses_stream import ResponsesStream
from nerve.gateway.guard.stream import GuardStream, PassStream
from nerve.safety.engine import SafetyEngine
from nerve.safety.record import record
from nerve.safety.scope import Scope
from nerve.safety.verdict import Verdict

__all__ = ["ToolGuard"]

log = logging.getLogger("nerve.gateway.guard")
_STREAMS: dict[Format, type[GuardStream]] = {
    "chat": ChatStream,
    "messages": MessagesStream,
    "responses": ResponsesStream,
}


class ToolGuard:
    def __init__(self, config: GuardConfig, engine: SafetyEngine) -> None:
        self.mode = config.tool_calls
        self.engine = engine
        self.scope = Scope.of(None, config.workspace, config.sql_mode, config.sql_dialect)
        self._table = ToolTable(config.tools)

    async def judge(
        self, name: str, arguments: object, *, freeform: bool = False, call_id: str | None = None
    ) -> Judged | None:
        """The engine's verdict on one call (`arguments`: a JSON string, an object, or with
        `freeform` a custom tool's raw input); None when the rule is off or there is nothing
        to run."""
        try:
            rule = self._table.rule(name)
            found = subject(name, rule, arguments, freeform=freeform)
            if found is None:
                return None
        except Exception as exc:  # a guard bug must not wave the call through
            log.exception("the tool-call guard could not read a call to %r", name)
            why = f"the tool-call guard could not read this call ({type(exc).__name__})"
            return Judged(name, call_id, "?", "", arguments, Verdict(False, "high", why, "rule"))
        verdict = await self.engine.check(found.kind, found.content, scope=self.scope)
        if verdict.allowed:  # blocked and flagged calls are logged where the answer is rewritten
            record(verdict, source="guard", check="tool_call", subject=f"{name}: {found.content}")
        return Judged(name, call_id, rule.kind, found.content, arguments, verdict)

    async def judge_body(self, fmt: Format, body: bytes) -> GuardOutcome:
        """A non-streamed answer of format `fmt`: the bytes to send and what was caught."""
        if self.mode == "off" or not any(m in body for m in MARKERS[fmt]):
            return GuardOutcome(body)
        try:
            data = orjson.loads(body)
        except orjson.JSONDecodeError:
            return GuardOutcome(body)  # not JSON: no call a client could run
        if not isinstance(data, dict):
            return GuardOutcome(body)
        block = self.mode == "block"
        try:
            new, hits = await rewrite(fmt, data, self.judge, block=block)
            if new is None:
                return GuardOutcome(body, flagged=tuple(hits))
            return GuardOutcome(orjson.dumps(new), blocked=tuple(hits))
        except Exception as exc:
            log.exception("the tool-call guard failed on a %s answer", fmt)
            error = f"{type(exc).__name__}: {exc}"[:300]
            if not block:
                return GuardOutcome(body, error=error)
            text = f"nerve's tool-call guard failed ({type(exc).__name__}); the tool calls of "
            text += "this answer were withheld."
            return GuardOutcome(orjson.dumps(withheld(fmt, data, text)), error=error)

    def stream(self, fmt: Format) -> GuardStream | PassStream:
        """A filter for one stream of format `fmt` (see stream.py for what it guarantees)."""
        if self.mode == "off":
            return PassStream()
        return _STREAMS[fmt](self.judge, block=self.mode == "block")


def withheld(fmt: Format, data: dict[str, Any], text: str) -> dict[str, Any]:
    """A plain answer holding only `text`, built from nothing but the original's id and model
    (whatever failed on the original must not fail here)."""
    rid = data.get("id") if isinstance(data.get("id"), str) else "nerve-withheld"
    model = data.get("model") if isinstance(data.get("model"), str) else ""
    if fmt == "chat":
        message = {"role": "assistant", "content": text}
        return {"id": rid, "object": "chat.completion", "created": int(time.time()),
                "model": model, "choices": [{"index": 0, "message": message, "logprobs": None,
                                             "finish_reason": "stop"}]}  # fmt: skip
    if fmt == "messages":
        return {"id": rid, "type": "message", "role": "assistant", "model": model,
                "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 0, "output_tokens": 0}}  # fmt: skip
    return {"id": rid, "object": "response", "created_at": int(time.time()),
            "status": "completed", "model": model, "error": None, "incomplete_details": None,
            "output": [message_item("msg_nerve_withheld", text)], "parallel_tool_calls": True,
            "tool_choice": "auto", "tools": []}  # fmt: skip
