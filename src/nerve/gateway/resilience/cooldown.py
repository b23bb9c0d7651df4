"""Cooldowns: a model that answered 429 rests for its Retry-After before it is tried again (GW-8).

The gateway keeps one Cooldowns object across config reloads, so a reload forgets no cooldown.
`cool` and `remaining` are `async` so a Redis-backed twin (a key with a TTL) can share them between
replicas; this in-process version never awaits. Both satisfy `CooldownsSeam` (seams.py).
"""

from __future__ import annotations

import math
import re
import time
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from nerve.clock import Clock

__all__ = ["Cooldowns", "parse_retry_after"]

_DELTA = re.compile(r"\d+(?:\.\d*)?|\.\d+")


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (RFC 9110 §10.2.3), or None when unusable.

    Both forms: delta-seconds ("7"; fractions like "1.5" are accepted, some vendors send them) and
    an HTTP-date (IMF-fixdate, plus the obsolete RFC 850 and asctime forms, read as UTC). A date in
    the past means "now": 0. Negative numbers, empty strings and garbage give None.
    """
    if value is None:
        return None
    text = value.strip()
    if _DELTA.fullmatch(text):
        seconds = float(text)
        return seconds if math.isfinite(seconds) else None
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:  # asctime and "-0000" dates carry no zone; HTTP dates are UTC
        when = when.replace(tzinfo=UTC)
    now = datetime.now(UTC) if now is None else now
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    return max(0.0, (when - now).total_seconds())


class Cooldowns:
    def __init__(
        self,
        *,
        default_seconds: float = 30,
        max_seconds: float = 3600,
        clock: Clock = time.monotonic,
    ) -> None:
        if not 0 <= default_seconds <= max_seconds:
            raise ValueError("need 0 <= default_seconds <= max_seconds")
        self.default_seconds = default_seconds
        self.max_seconds = max_seconds
        self._clock = clock
        self._until: dict[str, float] = {}

    async def cool(self, key: str, seconds: float | None) -> float:
        """Rest `key` for `seconds` (None: the default), clamped to [0, max_seconds].

        Returns the seconds applied. A cooldown already running longer is kept, not shortened: two
        429s racing each other must not let the shorter one win; the longer is what is returned.
        """
        wanted = self.default_seconds if seconds is None or math.isnan(seconds) else seconds
        wanted = min(max(wanted, 0.0), self.max_seconds)
        now = self._clock()
        self._sweep(now)
        until = max(self._until.get(key, now), now + wanted)
        if until > now:
            self._until[key] = until
        return until - now

    async def remaining(self, key: str) -> float:
        until = self._until.get(key)
        if until is None:
            return 0.0
        left = until - self._clock()
        if left <= 0:
            del self._until[key]
            return 0.0
        return left

    async def view(self) -> dict[str, float]:
        """`snapshot()` behind the async seam the Redis twin needs (RedisCooldowns.view)."""
        return self.snapshot()

    def snapshot(self) -> dict[str, float]:
        """Seconds remaining, for the keys cooling now."""
        now = self._clock()
        return {k: round(u - now, 3) for k, u in self._until.items() if u > now}

    def _sweep(self, now: float) -> None:
        # Keys are provider/model targets, so this stays small; sweeping keeps it that way.
        for key in [k for k, u in self._until.items() if u <= now]:
            del self._until[key]
