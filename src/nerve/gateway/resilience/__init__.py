"""Resilience state of the gateway: circuit breakers, 429 cooldowns, per-client rate limits.

Each class is one small seam — async methods that change state, sync `state`/`snapshot` reads —
so a Redis-backed twin (SPEC GW-19, many replicas sharing state) can implement the same methods and
be chosen at wiring time. Time comes from an injectable `Clock`; tests pass a `ManualClock`.
To add another kind of state: one module here, same shape, exported below.
"""

from nerve.gateway.resilience.breaker import Breakers, BreakerState
from nerve.gateway.resilience.clock import Clock, ManualClock
from nerve.gateway.resilience.cooldown import Cooldowns, parse_retry_after
from nerve.gateway.resilience.ratelimit import RateLimiter

__all__ = [
    "BreakerState",
    "Breakers",
    "Clock",
    "Cooldowns",
    "ManualClock",
    "RateLimiter",
    "parse_retry_after",
]
