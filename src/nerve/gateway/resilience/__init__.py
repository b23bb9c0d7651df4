"""Resilience state of the gateway: circuit breakers, 429 cooldowns, per-client rate limits.

Each class is one small seam: async methods that change state, and an async `view()` for the
HTTP views. Each has a Redis-backed twin with the same methods and semantics (redis_*.py, SPEC
GW-19: many replicas sharing one state); gateway/shared.py chooses at wiring time. Time comes from
an injectable `Clock`; tests pass a `ManualClock`. To add another kind of state: one module here,
same shape, its Redis twin beside it, both exported below.
"""

from nerve.clock import Clock, ManualClock
from nerve.gateway.resilience.breaker import Breakers, BreakerState
from nerve.gateway.resilience.cooldown import Cooldowns, parse_retry_after
from nerve.gateway.resilience.ratelimit import RateLimiter
from nerve.gateway.resilience.redis_breaker import RedisBreakers
from nerve.gateway.resilience.redis_cooldown import RedisCooldowns
from nerve.gateway.resilience.redis_limits import RedisRateLimiter

__all__ = [
    "BreakerState",
    "Breakers",
    "Clock",
    "Cooldowns",
    "ManualClock",
    "RateLimiter",
    "RedisBreakers",
    "RedisCooldowns",
    "RedisRateLimiter",
    "parse_retry_after",
]
