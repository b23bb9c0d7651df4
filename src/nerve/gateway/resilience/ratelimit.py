"""Per-client rate limits (SPEC GW-15): a sliding window, a token bucket and a concurrency cap.

A client is whatever the caller names it (API key or IP). Every request must pass all three:

- window: at most `window_requests` admitted in any `window_seconds`. An exact sliding log: the
  admission times, at most `window_requests` per client. Retry when the oldest leaves the window.
- burst: a token bucket of capacity `burst`, refilled `refill_per_second`. Retry at the next token.
- concurrent: at most `max_concurrent` admitted and not yet released. Retry after 1 s.

A refused request consumes nothing. When several limits refuse at once, the reason named is the
one that clears last, and retry_after is when the request would pass the time-based limits.

Memory is bounded: clients live in LRU order; each `acquire` forgets the least recent client if it
has gone quiet (nothing in flight, bucket full again, window empty), and at `max_clients` the least
recent one is forgotten regardless. `acquire`/`release` are `async` for the Redis-backed twin
(redis_limits.py), whose `acquire` returns a lease that `release` hands back; here it is "". Both
satisfy `LimiterSeam` (seams.py).
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nerve.clock import Clock
from nerve.errors import RateLimited

if TYPE_CHECKING:  # annotations only: this layer never reads config itself
    from nerve.config import RateConfig

__all__ = ["RateLimiter", "rate_options"]

_EPS = 1e-9  # float refill arithmetic: 10 x 0.1 s must earn a whole token


def rate_options(cfg: RateConfig) -> dict[str, Any]:
    """The limiter's constructor arguments from `limits.rate` (shared by its Redis twin)."""
    return {name: getattr(cfg, name) for name in _OPTIONS}


_OPTIONS = ("window_requests", "window_seconds", "burst", "refill_per_second", "max_concurrent")


@dataclass(slots=True)
class _Client:
    tokens: float
    refilled_at: float
    admitted: deque[float] = field(default_factory=deque)
    in_flight: int = 0


class RateLimiter:
    def __init__(
        self,
        *,
        window_requests: int,
        window_seconds: float,
        burst: int,
        refill_per_second: float,
        max_concurrent: int,
        clock: Clock = time.monotonic,
        max_clients: int = 100_000,
    ) -> None:
        if min(window_requests, burst, max_concurrent, max_clients) < 1:
            raise ValueError("window_requests, burst, max_concurrent, max_clients must be >= 1")
        if window_seconds <= 0 or refill_per_second <= 0:
            raise ValueError("window_seconds and refill_per_second must be > 0")
        self.window_requests = window_requests
        self.window_seconds = window_seconds
        self.burst = burst
        self.refill_per_second = refill_per_second
        self.max_concurrent = max_concurrent
        self.max_clients = max_clients
        self._clock = clock
        self._clients: OrderedDict[str, _Client] = OrderedDict()
        # A quiet client's state equals a new one's once both the bucket and the window recover.
        self._quiet_after = max(window_seconds, burst / refill_per_second)
        self._evicted = 0
        self._in_flight = 0

    @classmethod
    def from_config(
        cls, cfg: RateConfig, *, clock: Clock = time.monotonic, max_clients: int = 100_000
    ) -> RateLimiter:
        return cls(**rate_options(cfg), clock=clock, max_clients=max_clients)

    async def acquire(self, client: str) -> str:
        """Admit one request of `client` and return its lease ("" here), or raise RateLimited."""
        now = self._clock()
        c = self._client(client, now)
        if c.in_flight >= self.max_concurrent:
            raise RateLimited("concurrent", 1.0)
        c.tokens = min(self.burst, c.tokens + (now - c.refilled_at) * self.refill_per_second)
        c.refilled_at = now
        horizon = now - self.window_seconds
        while c.admitted and c.admitted[0] <= horizon:
            c.admitted.popleft()
        burst_wait = 0.0 if c.tokens >= 1 - _EPS else (1 - c.tokens) / self.refill_per_second
        window_wait = 0.0
        if len(c.admitted) >= self.window_requests:
            window_wait = c.admitted[0] - horizon
        if burst_wait or window_wait:
            reason = "window" if window_wait >= burst_wait else "burst"
            raise RateLimited(reason, max(burst_wait, window_wait))
        c.tokens = max(0.0, c.tokens - 1)
        c.admitted.append(now)
        c.in_flight += 1
        self._in_flight += 1
        return ""

    async def release(self, client: str, lease: str = "") -> None:
        """End one admitted request. A client forgotten meanwhile has nothing to release."""
        c = self._clients.get(client)
        if c is not None and c.in_flight > 0:
            c.in_flight -= 1
            self._in_flight -= 1
            self._clients.move_to_end(client)  # LRU order is by last activity

    def set_limits(
        self, *, window_requests: int, burst: int, refill_per_second: float, max_concurrent: int
    ) -> None:
        """New limits for the clients kept (the shared limiter's fallback divides its own)."""
        self.window_requests, self.burst = window_requests, burst
        self.refill_per_second, self.max_concurrent = refill_per_second, max_concurrent
        self._quiet_after = max(self.window_seconds, burst / refill_per_second)

    def snapshot(self) -> dict[str, Any]:
        return {
            "clients": len(self._clients),
            "max_clients": self.max_clients,
            "in_flight": self._in_flight,
            "evicted": self._evicted,
            "limits": {
                "window_requests": self.window_requests,
                "window_seconds": self.window_seconds,
                "burst": self.burst,
                "refill_per_second": self.refill_per_second,
                "max_concurrent": self.max_concurrent,
            },
        }

    def _client(self, client: str, now: float) -> _Client:
        c = self._clients.get(client)
        if c is not None:
            self._clients.move_to_end(client)
            return c
        # Amortised O(1): each forgotten client was added once.
        while self._clients:
            oldest_key, oldest = next(iter(self._clients.items()))
            if len(self._clients) < self.max_clients and not self._is_quiet(oldest, now):
                break
            del self._clients[oldest_key]
            self._evicted += 1
            self._in_flight -= oldest.in_flight
        c = self._clients[client] = _Client(tokens=float(self.burst), refilled_at=now)
        return c

    def _is_quiet(self, c: _Client, now: float) -> bool:
        last = c.admitted[-1] if c.admitted else c.refilled_at
        return c.in_flight == 0 and now - last >= self._quiet_after
