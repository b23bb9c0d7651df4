"""Each resilience seam (resilience/seams.py) tested once, against every implementation.

A scenario file parametrizes a fixture over IMPLEMENTATIONS and builds its object with
`implementation(request, clock, kind)(**options)`, with the same options and the same
ManualClock each time, so the same assertions prove the same semantics:

    local        the in-process class
    redis        its Redis twin, on the real Redis of conftest.py (skipped, naming Redis, when
                 it is unreachable; a failure in CI)
    shared       the Shared* class (resilience/fallback.py) while Redis answers
    shared-down  the Shared* class under `on_error: local` with Redis unreachable: its fallback

Each object made gets keys of its own (a fresh prefix under the test's), as a new in-process
object starts empty.
"""

from __future__ import annotations

import itertools
import socket
from collections.abc import Callable
from typing import Any

import pytest

from nerve.config import BreakerConfig, RateConfig, RedisConfig
from nerve.gateway.resilience import (
    Breakers,
    Cooldowns,
    ManualClock,
    RateLimiter,
    RedisBreakers,
    RedisCooldowns,
    RedisRateLimiter,
)
from nerve.gateway.resilience.fallback import SharedBreakers, SharedCooldowns
from nerve.gateway.resilience.shared import SharedState
from nerve.gateway.resilience.shared_limiter import SharedLimiter
from nerve.gateway.stats import Stats

IMPLEMENTATIONS = ["local", "redis", "shared", "shared-down"]

_LOCAL: dict[str, Callable[..., Any]] = {
    "limiter": RateLimiter, "breakers": Breakers, "cooldowns": Cooldowns,
}  # fmt: skip
_REDIS: dict[str, Callable[..., Any]] = {
    "limiter": RedisRateLimiter, "breakers": RedisBreakers, "cooldowns": RedisCooldowns,
}  # fmt: skip


def implementation(request: pytest.FixtureRequest, clock: ManualClock, kind: str) -> Any:
    """make(**options) → a `kind` ("limiter", "breakers", "cooldowns") of `request.param`."""
    if request.param == "local":
        return lambda **options: _LOCAL[kind](**options, clock=clock)
    if request.param == "shared-down":
        url = f"redis://127.0.0.1:{_closed_port()}/15"
        return lambda **options: _shared(kind, SharedState(_cfg(url, "down:"), clock=clock),
                                         clock, options)  # fmt: skip
    client = request.getfixturevalue("redis_client")()
    prefix, url = request.getfixturevalue("redis_prefix"), request.getfixturevalue("redis_url")
    fresh = (f"{prefix}{n}:" for n in itertools.count())
    if request.param == "shared":
        return lambda **options: _shared(
            kind, SharedState(_cfg(url, next(fresh)), clock=clock, redis=client,
                              stats=Stats(clock=clock)), clock, options,
        )  # fmt: skip
    return lambda **options: _REDIS[kind](client, **options, prefix=next(fresh), clock=clock)


def _cfg(url: str, prefix: str) -> RedisConfig:
    return RedisConfig(url=url, key_prefix=prefix, on_error="local")


def _shared(kind: str, shared: SharedState, clock: ManualClock, options: dict[str, Any]) -> Any:
    if kind == "limiter":
        return SharedLimiter(shared, RateConfig(**options), clock=clock)
    if kind == "cooldowns":
        return SharedCooldowns(shared, clock=clock, **options)
    probe_timeout = options.pop("probe_timeout", None)
    names = {"half_open_after": "half_open_after_seconds"}
    cfg = BreakerConfig(**{names.get(k, k): v for k, v in options.items()})
    breakers = SharedBreakers(shared, cfg, clock=clock)
    if probe_timeout is not None:  # not configurable: it follows half_open_after
        breakers.local.probe_timeout = breakers.redis.probe_timeout = probe_timeout
    return breakers


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
