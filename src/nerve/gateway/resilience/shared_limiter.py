"""Rate limits in Redis, with the configured limits divided by the replicas as the fallback.

The limiter of the shared state (SPEC GW-19), built like the others in fallback.py: its Redis
twin (redis_limits.py) and an in-process RateLimiter composed by one `Fallback`. What it adds:
while Redis is unavailable under `on_error: local` the fallback's limits are the configured ones
divided by the replicas last seen (N replicas cut off still admit about one limit), and leases
released meanwhile are owed to Redis and paid after the next heartbeat; under `on_error: closed`
`acquire` refuses with 503 `shared_state_unavailable`.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from nerve.errors import RateLimited
from nerve.gateway.resilience.fallback import Fallback
from nerve.gateway.resilience.ratelimit import RateLimiter
from nerve.gateway.resilience.redis_limits import RedisRateLimiter
from nerve.gateway.resilience.shared import MISS, SharedState

if TYPE_CHECKING:
    from nerve.clock import Clock
    from nerve.config import RateConfig
    from nerve.gateway.resilience.seams import LimiterSeam

__all__ = ["SharedLimiter"]

_MAX_PENDING = 10_000  # releases owed to Redis while it was down; beyond that leases go stale


class SharedLimiter:
    """Rate limits in Redis. Its in-process fallback enforces the configured limits divided by
    the replicas last seen, so N replicas cut off from Redis still admit about one limit."""

    def __init__(
        self, shared: SharedState, cfg: RateConfig, *, clock: Clock, lease_seconds: float = 600
    ) -> None:
        self.cfg = cfg
        self.shared = shared
        self.redis = RedisRateLimiter.from_config(
            cfg, shared.redis, prefix=shared.prefix, clock=shared.clock,
            lease_seconds=lease_seconds,
        )  # fmt: skip
        self.local = RateLimiter.from_config(cfg, clock=clock)
        self.fallback = Fallback(shared, self.redis, self.local)
        self._divisor = 1
        self._owed: list[tuple[str, str]] = []
        shared.after_beat(self._pay_owed)

    async def acquire(self, client: str) -> str:
        async def remote(redis: RedisRateLimiter) -> str:
            try:
                return await redis.acquire(client)
            except RateLimited:  # Redis answered: a refusal is a success of the shared state
                self.shared.succeeded()
                raise

        async def local(limiter: RateLimiter) -> str:
            if self.shared.policy == "closed":
                raise self.shared.unavailable()
            self._divide(self.shared.replicas)
            return await limiter.acquire(client)  # "": a local lease

        return await self.fallback.call(remote, local)

    async def release(self, client: str, lease: str = "") -> None:
        if not lease:
            await self.local.release(client)
            return
        done = await self.shared.run(lambda: self.redis.release(client, lease))
        if done is MISS and len(self._owed) < _MAX_PENDING:  # pay it back after a heartbeat
            self._owed.append((client, lease))

    def _divide(self, replicas: int) -> None:
        """The fallback's limits: the configured ones divided by the replicas last seen."""
        if replicas == self._divisor:
            return
        cfg, n = self.cfg, max(1, replicas)
        self.local.set_limits(
            window_requests=max(1, cfg.window_requests // n), burst=max(1, cfg.burst // n),
            refill_per_second=cfg.refill_per_second / n,
            max_concurrent=max(1, cfg.max_concurrent // n),
        )  # fmt: skip
        self._divisor = n

    async def _pay_owed(self) -> None:
        while self._owed:
            client, lease = self._owed[-1]
            if await self.shared.run(functools.partial(self.redis.release, client, lease)) is MISS:
                return
            self._owed.pop()


if TYPE_CHECKING:  # mypy proves that every limiter fits the seam

    def _seam(limiters: tuple[RateLimiter, RedisRateLimiter, SharedLimiter]) -> list[LimiterSeam]:
        return [*limiters]
