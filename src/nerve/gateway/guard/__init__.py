"""The tool-call guard (SPEC TP-1): judge the tool calls models return, before clients run them.

    guard = ToolGuard(config.guard, engine)             GuardConfig, the one SafetyEngine
    out = await guard.judge_body(fmt, body)            GuardOutcome(body, blocked, flagged)
    flt = guard.stream(fmt)                            per stream:
        await flt.feed(frame) -> list[bytes]           what to send now
        flt.finish() -> list[bytes]                    what is left at the end
        flt.blocked, flt.flagged, flt.error

`fmt` is what the gateway sends its client: "chat" (chat completions), "messages" (Anthropic
Messages) or "responses" (OpenAI Responses). `block` replaces a call the engine blocks with
assistant text saying why; `flag` lets every call through and reports; `off` reads nothing.

policy.py    which tool a call is for, what of it the engine judges (patch.py: path tools)
answers.py   non-streamed answers; stream.py the stream core, one *_stream.py per format
To guard one more tool, add it to policy.DEFAULT_TOOLS; one more format, a GuardStream subclass
and a table in answers.py.
"""

from nerve.gateway.guard.core import ToolGuard
from nerve.gateway.guard.judged import Format, GuardOutcome, Judged
from nerve.gateway.guard.policy import DEFAULT_TOOLS
from nerve.gateway.guard.stream import GuardStream, PassStream

__all__ = ["DEFAULT_TOOLS", "Format", "GuardOutcome", "GuardStream", "Judged", "PassStream",
           "ToolGuard"]  # fmt: skip
