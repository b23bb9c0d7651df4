"""The gateway's resilience state in Redis, with in-process objects as the fallback (GW-19).

Each Shared* class (here; the limiter's in shared_limiter.py) holds the Redis twin (redis_*.py)
and an in-process object of the same seam (seams.py), composed by one `Fallback`: a call goes
to Redis through `SharedState.run` (shared.py: the policy, the retry pacing, the outage log)
and, when that returns MISS (Redis not asked, or failed), to the in-process object, whose state
serves only while Redis is unavailable under `redis.on_error: local`. What the classes add to
the seam is what sharing needs: the breakers' `_pristine` keys and `take` here, the limiter's
divided fallback limits and owed releases in shared_limiter.py."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from nerve.gateway.resilience.breaker import Breakers
from nerve.gateway.resilience.cooldown import Cooldowns
from nerve.gateway.resilience.redis_breaker import RedisBreakers
from nerve.gateway.resilience.redis_cooldown import RedisCooldowns
from nerve.gateway.resilience.shared import MISS, SharedState

if TYPE_CHECKING:
    from nerve.clock import Clock
    from nerve.config import BreakerConfig
    from nerve.gateway.resilience.seams import BreakersSeam, BreakerState, CooldownsSeam

__all__ = ["Fallback", "SharedBreakers", "SharedCooldowns"]

R = TypeVar("R")
L = TypeVar("L")
T = TypeVar("T")


class Fallback(Generic[R, L]):
    """One concept's Redis twin and in-process fallback, composed under `shared`'s policy."""

    def __init__(self, shared: SharedState, redis: R, local: L) -> None:
        self.shared, self.redis, self.local = shared, redis, local

    async def call(
        self, op: Callable[[R], Awaitable[T]], fallback: Callable[[L], Awaitable[T]]
    ) -> T:
        """`op(redis)` through `SharedState.run`; `fallback(local)` when that returns MISS."""
        result = await self.shared.run(lambda: op(self.redis))
        return await fallback(self.local) if result is MISS else result

    async def each(self, op: Callable[[R | L], Awaitable[T]]) -> T:
        """`call(op, op)`: the same method of the seam, asked of whichever answers."""
        return await self.call(op, op)


class SharedCooldowns:
    """429 cooldowns in Redis: a provider that said "slow down" rests on every replica."""

    def __init__(
        self,
        shared: SharedState,
        *,
        clock: Clock,
        default_seconds: float = 30,
        max_seconds: float = 3600,
    ) -> None:
        self.shared = shared
        self.redis = RedisCooldowns(
            shared.redis, default_seconds=default_seconds, max_seconds=max_seconds,
            prefix=shared.prefix, clock=shared.clock,
        )  # fmt: skip
        self.local = Cooldowns(
            default_seconds=default_seconds, max_seconds=max_seconds, clock=clock
        )
        self.fallback = Fallback(shared, self.redis, self.local)

    async def cool(self, key: str, seconds: float | None) -> float:
        return await self.fallback.each(lambda c: c.cool(key, seconds))

    async def remaining(self, key: str) -> float:
        return await self.fallback.each(lambda c: c.remaining(key))

    async def view(self) -> dict[str, float]:
        return await self.fallback.each(lambda c: c.view())


class SharedBreakers:
    """Circuit breakers in Redis: one trip is seen by every replica."""

    def __init__(self, shared: SharedState, cfg: BreakerConfig, *, clock: Clock) -> None:
        self.shared = shared
        self.redis = RedisBreakers.from_config(
            cfg, shared.redis, prefix=shared.prefix, clock=shared.clock
        )
        self.local = Breakers.from_config(cfg, clock=clock)
        self.fallback = Fallback(shared, self.redis, self.local)
        self._pristine: set[str] = set()  # keys whose last gate here found no breaker story

    def configure(self, cfg: BreakerConfig) -> None:
        self.local.configure(cfg)
        self.redis.configure(cfg)

    async def allow(self, key: str) -> bool:
        return await self.fallback.each(lambda b: b.allow(key))

    async def gate(self, key: str, cooldowns: CooldownsSeam) -> tuple[float, bool]:
        async def remote(redis: RedisBreakers) -> tuple[float, bool]:
            if not isinstance(cooldowns, SharedCooldowns):
                return await redis.gate(key, cooldowns)
            return self.take(key, await redis.gate_verdict(key, cooldowns.redis))

        return await self.fallback.call(remote, lambda b: b.gate(key, cooldowns))

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
        await self.fallback.each(lambda b: b.record_success(key, probe=probe))

    async def record_failure(self, key: str) -> None:
        self._pristine.discard(key)
        await self.fallback.each(lambda b: b.record_failure(key))

    async def release(self, key: str) -> None:
        await self.fallback.each(lambda b: b.release(key))

    async def state(self, key: str) -> BreakerState:
        return await self.fallback.each(lambda b: b.state(key))

    async def view(self) -> dict[str, dict[str, Any]]:
        return await self.fallback.each(lambda b: b.view())


if TYPE_CHECKING:  # mypy proves that every implementation fits its seam

    def _seams(
        breakers: tuple[Breakers, RedisBreakers, SharedBreakers],
        cooldowns: tuple[Cooldowns, RedisCooldowns, SharedCooldowns],
    ) -> tuple[list[BreakersSeam], list[CooldownsSeam]]:
        return [*breakers], [*cooldowns]
