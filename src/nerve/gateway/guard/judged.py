"""What the guard concluded about one tool call, and what it did to one answer."""

from __future__ import annotations

import json
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from nerve.safety.verdict import RiskLevel, Verdict

__all__ = ["CallJudge", "Format", "GuardOutcome", "Judged", "comment", "shown"]

Format = Literal["chat", "messages", "responses"]
_SHOWN_MAX = 200  # the notice quotes the call, not a whole file written by it


@dataclass(frozen=True, slots=True)
class Judged:
    """One judged tool call. `kind` is the rule's (shell, sql, path, action); `subject` what
    the engine judged (for a path tool, the equivalent shell operation: see patch.py)."""

    tool: str
    call_id: str | None
    kind: str
    subject: str
    arguments: object  # as the call carried them
    verdict: Verdict

    @property
    def shown(self) -> str:
        """The arguments as the notice quotes them (made only when a notice is)."""
        return shown(self.arguments) if self.arguments not in (None, "") else ""

    @property
    def allowed(self) -> bool:
        return self.verdict.allowed

    @property
    def reason(self) -> str:
        return self.verdict.reason

    @property
    def risk(self) -> RiskLevel:
        return self.verdict.risk_level

    def notice(self) -> str:
        """The assistant text a blocked call is replaced with."""
        how = ""
        if self.kind == "path" and "\n" not in self.subject:
            how = f"judged as `{self.subject}`, "
        call = f"{self.tool} {self.shown}" if self.shown else self.tool
        return f"nerve blocked the tool call {call}: {how}{self.reason}"

    def to_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "call_id": self.call_id, "kind": self.kind,
                "risk": self.risk, "reason": self.reason}  # fmt: skip


@dataclass(frozen=True, slots=True)
class GuardOutcome:
    """A non-streamed answer after the guard: `body` is the very bytes given when nothing was
    blocked. `error` is set when the guard itself failed (see ToolGuard.judge_body)."""

    body: bytes
    blocked: tuple[Judged, ...] = ()
    flagged: tuple[Judged, ...] = ()
    error: str | None = None


class CallJudge(Protocol):
    """ToolGuard.judge: the verdict on one call, None when nothing of it is judged."""

    def __call__(
        self, name: str, arguments: object, *, freeform: bool = False, call_id: str | None = None
    ) -> Awaitable[Judged | None]: ...


def shown(arguments: object) -> str:
    """Arguments as a notice quotes them: JSON on one line, cut to a readable length."""
    if isinstance(arguments, str):
        try:
            text = json.dumps(json.loads(arguments), ensure_ascii=False)
        except ValueError:
            text = arguments
    else:
        text = json.dumps(arguments, ensure_ascii=False, default=str)
    text = " ".join(text.split()) if "\n" in text else text
    return text if len(text) <= _SHOWN_MAX else text[: _SHOWN_MAX - 1] + "…"


def comment(blocked: list[Judged], flagged: list[Judged]) -> bytes:
    """An SSE comment naming what the guard did (clients ignore comments): one line per call,
    `: x-nerve-guard flagged Bash <reason>`, for streams whose headers were sent long ago."""
    lines = [
        f": x-nerve-guard {what} {_line(j.tool)[:100]} {_line(j.reason)[:300]}\n"
        for what, calls in (("blocked", blocked), ("flagged", flagged))
        for j in calls
    ]
    return "".join(lines).encode() + b"\n" if lines else b""


def _line(text: str) -> str:
    return " ".join(text.split())  # no line break may end the comment early
