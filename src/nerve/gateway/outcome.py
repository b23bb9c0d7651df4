"""One upstream call's outcome (SPEC GW-12): what the gateway tells its observers.

`Gateway` builds an `Outcome` for every call it records (a completion, a finished stream, each
failed candidate of a walk) and hands it synchronously to each callable in `Gateway.observers`:
the learning router and the admin event log. Observers run on the hot path, so they must be
cheap; one that raises is logged and never breaks the request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nerve.gateway.stats import Usage

__all__ = ["Outcome"]


@dataclass(frozen=True, slots=True)
class Outcome:
    route: str  # the plan's route; "explicit" when the client named provider/model
    target: str  # "provider/model" that was called
    ok: bool
    latency_s: float  # whole call; for a stream, until it ended
    usage: Usage | None
    cost_usd: float  # from the configured prices; 0.0 when unpriced or usage unknown
    fallback: bool  # called as other than the plan's first candidate (ok: a fallback served)
    error: str | None  # "ErrorType: message" of a failed call
    attempts: tuple[tuple[str, str], ...]  # (target, why) skipped or failed before this call
    decided_by: str | None  # the router's layer for model "auto"; None for a named route/model
    at: float  # time.time() when recorded

    def to_dict(self) -> dict[str, Any]:
        usage = self.usage
        return {
            "route": self.route,
            "target": self.target,
            "ok": self.ok,
            "latency_ms": round(self.latency_s * 1000, 3),
            "tokens": None
            if usage is None
            else {"prompt": usage.prompt_tokens, "completion": usage.completion_tokens,
                  "reasoning": usage.reasoning_tokens, "total": usage.total_tokens},
            "cost_usd": self.cost_usd,
            "fallback": self.fallback,
            "error": self.error,
            "attempts": [list(a) for a in self.attempts],
            "decided_by": self.decided_by,
            "at": self.at,
        }  # fmt: skip
