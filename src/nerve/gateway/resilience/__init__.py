"""Resilience state of the gateway: circuit breakers, 429 cooldowns, per-client rate limits.

One Protocol per concept declares the seam the gateway calls (seams.py: `LimiterSeam`,
`BreakersSeam`, `CooldownsSeam`; every method async, reads included). Each has three
implementations: the in-process class (breaker.py, cooldown.py, ratelimit.py); its Redis twin
with the state machine in Lua (redis_*.py, SPEC GW-19: many replicas sharing one state); and the
shared class (fallback.py, shared_limiter.py) that composes the two with one `Fallback` under
the policy of `SharedState` (shared.py: connection, heartbeat, `redis.on_error`).
gateway/state.py chooses at wiring time. Time comes from an injectable `Clock`; tests pass a
`ManualClock`. To add another kind of state: a Protocol in seams.py, one module here, its Redis
twin beside it, a Shared* class over a `Fallback`, and one scenario suite run against all of
them (tests/gateway/implementations.py)."""

from nerve.clock import Clock, ManualClock
from nerve.gateway.resilience.breaker import Breakers
from nerve.gateway.resilience.cooldown import Cooldowns, parse_retry_after
from nerve.gateway.resilience.ratelimit import RateLimiter
from nerve.gateway.resilience.redis_breaker import RedisBreakers
from nerve.gateway.resilience.redis_cooldown import RedisCooldowns
from nerve.gateway.resilience.redis_limits import RedisRateLimiter
from nerve.gateway.resilience.seams import BreakersSeam, BreakerState, CooldownsSeam, LimiterSeam

__all__ = [
    "BreakerState",
    "Breakers",
    "BreakersSeam",
    "Clock",
    "Cooldowns",
    "CooldownsSeam",
    "LimiterSeam",
    "ManualClock",
    "RateLimiter",
    "RedisBreakers",
    "RedisCooldowns",
    "RedisRateLimiter",
    "parse_retry_after",
]
