"""What `process` runs once a request is understood and allowed: one handler per intent.

A handler is an async function of the understood request. Later subsystems (memory, tools, the
assistant) register theirs; `register` replaces an earlier handler for the same intent.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from nerve.intent import Intent
from nerve.language import LanguageResult

__all__ = ["Handler", "Handlers", "Understood"]


@dataclass(frozen=True, slots=True)
class Understood:
    """A request after language and intent: what a handler receives."""

    text: str
    user_id: str
    language: LanguageResult
    intent: Intent


Handler = Callable[[Understood], Awaitable[dict[str, Any]]]


@dataclass(frozen=True, slots=True)
class Registered:
    handler: Handler
    retries: int
    timeout_seconds: float


class Handlers:
    def __init__(self) -> None:
        self._by_intent: dict[str, Registered] = {}

    def register(
        self, intent: str, handler: Handler, *, retries: int = 2, timeout_seconds: float = 60.0
    ) -> None:
        if retries < 0 or timeout_seconds <= 0:
            raise ValueError("retries must be >= 0 and timeout_seconds > 0")
        self._by_intent[intent] = Registered(handler, retries, timeout_seconds)

    def get(self, intent: str) -> Registered | None:
        return self._by_intent.get(intent)

    def intents(self) -> list[str]:
        return sorted(self._by_intent)
