"""What the gateway's state is made of (SPEC GW-19): `build_resilience` hands out the
in-process RateLimiter, Breakers and Cooldowns without `redis.url`, and with it the Shared*
classes over one `SharedState` (resilience/shared.py), which prefer Redis and fall back to an
in-process object (resilience/fallback.py). Either way the gateway sees only the seams
(resilience/seams.py). The admin charts' time series rides Redis when it is set, else a
PostgreSQL `storage.url` (timeseries_sql.py), else stays in this process.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from nerve.config import Config, RateConfig
from nerve.gateway.learning.learner import Learner
from nerve.gateway.learning.shared import SharedLearner
from nerve.gateway.resilience import (
    Breakers,
    BreakersSeam,
    Clock,
    Cooldowns,
    CooldownsSeam,
    LimiterSeam,
    RateLimiter,
)
from nerve.gateway.resilience.fallback import SharedBreakers, SharedCooldowns
from nerve.gateway.resilience.shared import SharedState
from nerve.gateway.resilience.shared_limiter import SharedLimiter
from nerve.gateway.stats import Stats
from nerve.gateway.timeseries_redis import share
from nerve.gateway.timeseries_sql import SqlTimeSeries, share_sql
from nerve.store.url import PostgresURL, parse_store_url

__all__ = ["LOCAL_HEALTH", "Resilience", "build_resilience"]


LOCAL_HEALTH = {"backend": "local", "ok": True, "policy": None, "replicas": 1,
                "degraded_since": None, "last_error": None}  # fmt: skip


@dataclass(slots=True)
class Resilience:
    """What the gateway's state is made of: in-process, or shared through Redis (`shared`)."""

    limiter: LimiterSeam
    breakers: BreakersSeam
    cooldowns: CooldownsSeam
    shared: SharedState | None
    clock: Clock
    series: SqlTimeSeries | None = None  # the charts in PostgreSQL (no Redis): close() at exit

    def limiter_for(self, rate: RateConfig) -> LimiterSeam:
        """A limiter for new limits (a config reload), backed like the first one."""
        if self.shared is None:
            return RateLimiter.from_config(rate, clock=self.clock)
        return SharedLimiter(self.shared, rate, clock=self.clock)

    def learner(self, config: Config) -> Learner:
        """The learning router: in-process, or a view of the statistics in Redis."""
        if self.shared is None:
            return Learner(config.learning, config.routes)
        return SharedLearner(self.shared, config.learning, config.routes)


def build_resilience(config: Config, stats: Stats, *, clock: Clock) -> Resilience:
    """In-process classes without `redis.url`; with it, the Redis-backed Shared* classes.

    `clock` is the gateway's monotonic clock. Redis needs a clock every replica agrees on, so
    the default `time.monotonic` becomes `time.time` there; a test's ManualClock is used as is.
    """
    limits = config.limits
    wall = time.time if clock is time.monotonic else clock
    if config.redis.url is None:
        return Resilience(
            RateLimiter.from_config(limits.rate, clock=clock),
            Breakers.from_config(limits.breaker, clock=clock),
            Cooldowns(clock=clock),
            None,
            clock,
            _charts_in_postgres(config, stats, wall),
        )
    shared = SharedState(config.redis, clock=wall, stats=stats)
    share(shared, stats.timeseries)  # the admin charts ride the stats flush
    return Resilience(
        SharedLimiter(shared, limits.rate, clock=clock),
        SharedBreakers(shared, limits.breaker, clock=clock),
        SharedCooldowns(shared, clock=clock),
        shared,
        clock,
    )


def _charts_in_postgres(config: Config, stats: Stats, wall: Clock) -> SqlTimeSeries | None:
    """Without Redis, a PostgreSQL `storage.url` shares the admin charts' minutes."""
    try:
        where = parse_store_url(config.storage.url, what="chart series")
    except ValueError:  # the stores on it say what is wrong when they open
        return None
    if not isinstance(where, PostgresURL):
        return None
    return share_sql(where.dsn, where.schema, stats.timeseries, clock=wall)
