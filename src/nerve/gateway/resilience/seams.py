"""The three seams of the gateway's resilience state: what the gateway calls, and nothing more.

Each concept has three implementations: in-process (breaker.py, cooldown.py, ratelimit.py), its
Redis twin (redis_*.py), and the shared one that prefers the twin and falls back to the
in-process object (fallback.py). All three satisfy the Protocol below; fallback.py has mypy
prove it. Every method is `async`, reads included, so no implementation has to pretend that
Redis answers synchronously.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:  # annotations only: this layer never reads config itself
    from nerve.config import BreakerConfig

__all__ = ["BreakerState", "BreakersSeam", "CooldownsSeam", "LimiterSeam"]

BreakerState = Literal["closed", "open", "half_open"]


class LimiterSeam(Protocol):
    """Per-client rate limits (GW-15): a lease per admitted request, handed back on release."""

    async def acquire(self, client: str) -> str:
        """Admit one request of `client` and return its lease, or raise RateLimited."""
        ...

    async def release(self, client: str, lease: str) -> None:
        """End one admitted request; an unknown or stale lease is harmless."""
        ...


class CooldownsSeam(Protocol):
    """429 cooldowns per provider/model (GW-8)."""

    async def cool(self, key: str, seconds: float | None) -> float:
        """Rest `key` (None: the default), keeping a longer running rest; the seconds applied."""
        ...

    async def remaining(self, key: str) -> float: ...

    async def view(self) -> dict[str, float]:
        """Seconds remaining, for the keys cooling now."""
        ...


class BreakersSeam(Protocol):
    """Circuit breakers per provider/model (GW-7)."""

    def configure(self, cfg: BreakerConfig) -> None:
        """New thresholds from a reloaded config; the state is kept."""
        ...

    async def allow(self, key: str) -> bool: ...

    async def gate(self, key: str, cooldowns: CooldownsSeam) -> tuple[float, bool]:
        """Before a call: (seconds `key` still rests after a 429, whether the breaker admits)."""
        ...

    async def record_success(self, key: str, *, probe: bool = False) -> None: ...

    async def record_failure(self, key: str) -> None: ...

    async def release(self, key: str) -> None:
        """Give back a half-open probe slot without a verdict."""
        ...

    async def state(self, key: str) -> BreakerState:
        """The state as `allow()` would see it: an open breaker past its timer reads half-open."""
        ...

    async def view(self) -> dict[str, dict[str, Any]]:
        """Every key not in the pristine closed state, for /stats and the dashboard."""
        ...
