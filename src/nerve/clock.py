"""Time for the resilience state: a monotonic clock that tests replace with a ManualClock."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["Clock", "ManualClock"]

Clock = Callable[[], float]
"""Monotonic seconds. The default everywhere is `time.monotonic`."""


class ManualClock:
    """A clock that moves only when told to, so tests never sleep."""

    def __init__(self, start: float = 1000.0) -> None:
        # Not 0: code that treats 0 as "never" would pass tests it should fail.
        self._now = start

    def __call__(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("a monotonic clock cannot go back")
        self._now += seconds
