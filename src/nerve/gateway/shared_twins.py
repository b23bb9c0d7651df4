"""The gateway's resilience state in Redis, with the in-process classes as the fallback (GW-19).

Each class here *is* the in-process class (so the gateway takes it where it takes that one) whose
own state serves only while Redis is unavailable under `redis.on_error: local`; while Redis works
every call goes to the Redis twin in resilience/redis_*.py. The policy, the retry pacing and the
outage log live in `SharedState.run` (shared.py); a call it does not pass to Redis returns MISS
and falls through to the in-process method.

The sync `state()`/`snapshot()` inherited from the in-process classes read the fallback state;
views use the async `view()`, which asks Redis.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from nerve.errors import RateLimited
from nerve.gateway.resilience import Breakers, Clock, Cooldowns, RateLimiter
from nerve.gateway.resilience.breaker import breaker_options
from nerve.gateway.resilience.ratelimit import rate_options
from nerve.gateway.resilience.redis_breaker import RedisBreakers
from nerve.gateway.resilience.redis_cooldown import RedisCooldowns
from nerve.gateway.resilience.redis_limits import RedisRateLimiter
from nerve.gateway.shared import MISS, SharedState

if TYPE_CHECKING:
    from nerve.config import BreakerConfig, RateConfig

__all__ = ["SharedBreakers", "SharedCooldowns", "SharedLimiter"]

_MAX_PENDING = 10_000  # releases owed to Redis while it was down; beyond that leases go stale


class SharedLimiter(RateLimiter):
    """Rate limits in Redis. Its in-process fallback enforces the configured limits divided by
    the replicas last seen, so N replicas cut off from Redis still admit about one limit."""

    def __init__(
        self, shared: SharedState, cfg: RateConfig, *, clock: Clock, lease_seconds: float = 600
    ) -> None:
        super().__init__(**rate_options(cfg), clock=clock)
        self.cfg = cfg
        self.shared = shared
        self.redis = RedisRateLimiter.from_config(
            cfg, shared.redis, prefix=shared.prefix, clock=shared.clock,
            lease_seconds=lease_seconds,
        )  # fmt: skip
        self._divisor = 1
        self._owed: list[tuple[str, str]] = []
        shared.after_beat(self._pay_owed)

    async def acquire(self, client: str) -> str:
        shared = self.shared
        if shared.usable():
            try:
                lease = await self.redis.acquire(client)
            except RateLimited:
                shared.succeeded()
                raise
            except shared.errors as e:
                shared.failed(e)
            else:
                shared.succeeded()
                return lease
        if shared.policy == "closed":
            raise shared.unavailable()
        self._divide(shared.replicas)
        return await super().acquire(client)  # "": a local lease

    async def release(self, client: str, lease: str = "") -> None:
        if not lease:
            await super().release(client)
            return
        done = await self.shared.run(lambda: self.redis.release(client, lease))
        if done is MISS and len(self._owed) < _MAX_PENDING:  # pay it back after a heartbeat
            self._owed.append((client, lease))

    def _divide(self, replicas: int) -> None:
        """The fallback's limits: the configured ones divided by the replicas last seen."""
        if replicas == self._divisor:
            return
        cfg, n = self.cfg, max(1, replicas)
        self.window_requests = max(1, cfg.window_requests // n)
        self.burst = max(1, cfg.burst // n)
        self.refill_per_second = cfg.refill_per_second / n
        self.max_concurrent = max(1, cfg.max_concurrent // n)
        self._quiet_after = max(self.window_seconds, self.burst / self.refill_per_second)
        self._divisor = n

    async def _pay_owed(self) -> None:
        while self._owed:
            client, lease = self._owed[-1]
            if await self.shared.run(functools.partial(self.redis.release, client, lease)) is MISS:
                return
            self._owed.pop()


class SharedBreakers(Breakers):
    """Circuit breakers in Redis: one trip is seen by every replica."""

    def __init__(self, shared: SharedState, cfg: BreakerConfig, *, clock: Clock) -> None:
        super().__init__(**breaker_options(cfg), clock=clock)
        self.shared = shared
        self.redis = RedisBreakers.from_config(
            cfg, shared.redis, prefix=shared.prefix, clock=shared.clock
        )
        self._pristine: set[str] = set()  # keys whose last gate here found no breaker story

    def configure(self, cfg: BreakerConfig) -> None:
        super().configure(cfg)
        self.redis.configure(cfg)

    async def allow(self, key: str) -> bool:
        allowed = await self.shared.run(lambda: self.redis.allow(key))
        return await super().allow(key) if allowed is MISS else allowed

    async def gate(self, key: str, cooldowns: Cooldowns) -> tuple[float, bool]:
        if not isinstance(cooldowns, SharedCooldowns):
            return await super().gate(key, cooldowns)
        verdict = await self.shared.run(lambda: self.redis.gate(key, cooldowns.redis))
        if verdict is MISS:
            return await super().gate(key, cooldowns)
        return self.take(key, verdict)

    def take(self, key: str, verdict: tuple[float, bool, bool]) -> tuple[float, bool]:
        """A gate verdict Redis gave (here, or in the admission script): (cooling, admitted)."""
        cooling, admitted, pristine = verdict
        if pristine:
            self._pristine.add(key)
        else:
            self._pristine.discard(key)
        return cooling, admitted

    async def record_success(self, key: str, *, probe: bool = False) -> None:
        if key in self._pristine:
            # The gate saw no story for this key: a success has nothing to reset. This saves a
            # round trip per call; the price is that a failure another replica records between
            # our gate and our success is not cleared by it (the count errs towards opening).
            return
        if await self.shared.run(lambda: self.redis.record_success(key, probe=probe)) is MISS:
            await super().record_success(key, probe=probe)

    async def record_failure(self, key: str) -> None:
        self._pristine.discard(key)
        if await self.shared.run(lambda: self.redis.record_failure(key)) is MISS:
            await super().record_failure(key)

    async def release(self, key: str) -> None:
        if await self.shared.run(lambda: self.redis.release(key)) is MISS:
            await super().release(key)

    async def view(self) -> dict[str, dict[str, Any]]:
        known = await self.shared.run(self.redis.view)
        return self.snapshot() if known is MISS else known


class SharedCooldowns(Cooldowns):
    """429 cooldowns in Redis: a provider that said "slow down" rests on every replica."""

    def __init__(
        self,
        shared: SharedState,
        *,
        clock: Clock,
        default_seconds: float = 30,
        max_seconds: float = 3600,
    ) -> None:
        super().__init__(default_seconds=default_seconds, max_seconds=max_seconds, clock=clock)
        self.shared = shared
        self.redis = RedisCooldowns(
            shared.redis, default_seconds=default_seconds, max_seconds=max_seconds,
            prefix=shared.prefix, clock=shared.clock,
        )  # fmt: skip

    async def cool(self, key: str, seconds: float | None) -> float:
        applied = await self.shared.run(lambda: self.redis.cool(key, seconds))
        return await super().cool(key, seconds) if applied is MISS else applied

    async def remaining(self, key: str) -> float:
        left = await self.shared.run(lambda: self.redis.remaining(key))
        return await super().remaining(key) if left is MISS else left

    async def view(self) -> dict[str, float]:
        cooling = await self.shared.run(self.redis.view)
        return self.snapshot() if cooling is MISS else cooling
