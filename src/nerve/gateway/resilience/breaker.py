"""Circuit breakers, one per "provider/model" key (SPEC GW-7).

    closed ──N consecutive failures──▶ open ──half_open_after elapsed──▶ half_open
      ▲                                  ▲                                 │
      └──── M probe successes ───────────┼──────── probe failure ──────────┘

Half-open admits one probe at a time: `allow()` hands out the single probe slot, and
`record_success`, `record_failure` or `release` gives it back. A probe that never reports (its task
died) is presumed lost after `probe_timeout` and the slot is handed out again, so a breaker can't
stick half-open forever. A health probe's success (`probe=True`) counts only while half-open: a
closed breaker's consecutive failures are the calls' own.

Every method of the seam (seams.py), `state` included, is `async` so a Redis-backed twin can
share state between replicas; this in-process version never awaits, so each call is atomic on the
event loop. Keys back in the pristine state (closed, no failures) are forgotten, so memory holds
only breakers with a story.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nerve.clock import Clock
from nerve.gateway.resilience.seams import BreakerState

if TYPE_CHECKING:  # annotations only: this layer never reads config itself
    from nerve.config import BreakerConfig
    from nerve.gateway.resilience.seams import CooldownsSeam

__all__ = ["BreakerState", "Breakers", "breaker_options", "configure_breaker"]


@dataclass(slots=True)
class _Breaker:
    state: BreakerState = "closed"
    failures: int = 0  # consecutive, while closed
    successes: int = 0  # probe successes, while half-open
    opened_at: float = 0.0
    probe_since: float | None = None  # when the probe in flight was handed out


def breaker_options(cfg: BreakerConfig) -> dict[str, Any]:
    """The breakers' constructor arguments from `limits.breaker` (shared by the Redis twin)."""
    return {
        "failures": cfg.failures,
        "half_open_after": cfg.half_open_after_seconds,
        "successes_to_close": cfg.successes_to_close,
    }


def configure_breaker(breakers: Any, cfg: BreakerConfig) -> None:
    """Apply reloaded thresholds to either implementation; the probe timeout follows the timer."""
    for name, value in breaker_options(cfg).items():
        setattr(breakers, name, value)
    breakers.probe_timeout = cfg.half_open_after_seconds


class Breakers:
    def __init__(
        self,
        *,
        failures: int = 3,
        half_open_after: float = 60,
        successes_to_close: int = 1,
        probe_timeout: float | None = None,
        clock: Clock = time.monotonic,
    ) -> None:
        if failures < 1 or successes_to_close < 1 or half_open_after <= 0:
            raise ValueError("failures and successes_to_close must be >= 1, half_open_after > 0")
        self.failures = failures
        self.half_open_after = half_open_after
        self.successes_to_close = successes_to_close
        self.probe_timeout = half_open_after if probe_timeout is None else probe_timeout
        self._clock = clock
        self._keys: dict[str, _Breaker] = {}

    @classmethod
    def from_config(cls, cfg: BreakerConfig, *, clock: Clock = time.monotonic) -> Breakers:
        return cls(**breaker_options(cfg), clock=clock)

    def configure(self, cfg: BreakerConfig) -> None:
        """New thresholds from a reloaded config; the state of every key is kept."""
        configure_breaker(self, cfg)

    async def allow(self, key: str) -> bool:
        b = self._keys.get(key)
        if b is None or b.state == "closed":
            return True
        now = self._clock()
        if b.state == "open":
            if now - b.opened_at < self.half_open_after:
                return False
            b.state, b.successes, b.probe_since = "half_open", 0, None
        if b.probe_since is not None and now - b.probe_since < self.probe_timeout:
            return False
        b.probe_since = now
        return True

    async def gate(self, key: str, cooldowns: CooldownsSeam) -> tuple[float, bool]:
        """Before a call: (seconds `key` still rests after a 429, whether the breaker admits it).

        One question so that a shared twin can answer both in one round trip.
        """
        cooling = await cooldowns.remaining(key)
        if cooling > 0:
            return cooling, False
        return 0.0, await self.allow(key)

    async def record_success(self, key: str, *, probe: bool = False) -> None:
        """A call answered. A model-list `probe` may close a half-open breaker but never clears
        a closed one's failures: `/models` answering says nothing of whether chat does."""
        b = self._keys.get(key)
        if b is None:
            return
        if b.state == "closed":
            if not probe:
                del self._keys[key]  # consecutive count reset: back to pristine
        elif b.state == "half_open":
            b.successes += 1
            b.probe_since = None
            if b.successes >= self.successes_to_close:
                del self._keys[key]
        # open: a late answer to a call admitted before the trip; only a probe may close.

    async def record_failure(self, key: str) -> None:
        b = self._keys.setdefault(key, _Breaker())
        if b.state == "closed":
            b.failures += 1
            if b.failures >= self.failures:
                self._open(b)
        elif b.state == "half_open":
            self._open(b)
        # open: a late failure of a call admitted before the trip must not extend the timer.

    async def release(self, key: str) -> None:
        b = self._keys.get(key)
        if b is not None and b.state == "half_open":
            b.probe_since = None

    async def state(self, key: str) -> BreakerState:
        """The state as `allow()` would see it: an open breaker past its timer reads half-open."""
        b = self._keys.get(key)
        return "closed" if b is None else self._state(b, self._clock())

    async def view(self) -> dict[str, dict[str, Any]]:
        """`snapshot()` behind the async seam the Redis twin needs (RedisBreakers.view)."""
        return self.snapshot()

    def snapshot(self) -> dict[str, dict[str, Any]]:
        """Every key not in the pristine closed state; absent keys are closed with no failures."""
        now = self._clock()
        out: dict[str, dict[str, Any]] = {}
        for key, b in self._keys.items():
            tripped = b.state != "closed"
            out[key] = {
                "state": self._state(b, now),
                "consecutive_failures": b.failures,
                "opened_at_ago_s": round(now - b.opened_at, 3) if tripped else None,
                "half_open_in_s": (
                    round(max(0.0, b.opened_at + self.half_open_after - now), 3)
                    if b.state == "open"
                    else None
                ),
                "probe_successes": b.successes,
                "probe_in_flight": b.probe_since is not None
                and now - b.probe_since < self.probe_timeout,
            }
        return out

    def _state(self, b: _Breaker, now: float) -> BreakerState:
        if b.state == "open" and now - b.opened_at >= self.half_open_after:
            return "half_open"
        return b.state

    def _open(self, b: _Breaker) -> None:
        b.state, b.opened_at, b.successes, b.probe_since = "open", self._clock(), 0, None
