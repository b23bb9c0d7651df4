"""Login throttling (SPEC AD-2): 5 failures a minute → 429, 10 failures → a 30-minute ban.

Counted per client address. An attempt is recorded as a failure *before* the password is
checked and forgiven when it succeeds, so a burst of parallel guesses cannot slip past the limit
while the (deliberately slow) hash runs. Failures older than the ban period are forgotten; a
success clears the client. At most `max_clients` addresses are remembered (least recent first
out). With `redis.url` set, `SharedLoginThrottle` keeps the counts in Redis, so N workers or
replicas give a client no more guesses than one; while Redis is down this process's own counts
apply.
"""

from __future__ import annotations

import math
from collections import OrderedDict, deque
from dataclasses import dataclass, field

from nerve.errors import RateLimited
from nerve.gateway.resilience import Clock

__all__ = ["LoginBanned", "LoginThrottle", "LoginThrottled"]


class LoginThrottled(RateLimited):
    def __init__(self, retry_after: float) -> None:
        super().__init__("login_throttled", retry_after)
        self.message = (
            "too many failed admin logins from this address; "
            f"try again in {max(1, math.ceil(retry_after))}s"
        )


class LoginBanned(RateLimited):
    def __init__(self, retry_after: float) -> None:
        super().__init__("login_banned", retry_after)
        minutes = max(1, math.ceil(retry_after / 60))
        self.message = (
            f"this address is banned from admin login for {minutes} more minute(s) "
            "after 10 failed attempts"
        )


@dataclass
class _Client:
    failures: deque[float] = field(default_factory=deque)
    banned_until: float = 0.0


class LoginThrottle:
    def __init__(
        self,
        clock: Clock,
        *,
        per_minute: int = 5,
        ban_after: int = 10,
        ban_seconds: float = 1800,
        max_clients: int = 10_000,
    ) -> None:
        self.clock = clock
        self.per_minute = per_minute
        self.ban_after = ban_after
        self.ban_seconds = ban_seconds
        self.max_clients = max_clients
        self._clients: OrderedDict[str, _Client] = OrderedDict()

    async def attempt(self, client: str) -> None:
        """Raise when `client` may not try now; else count the attempt as failed until forgiven."""
        now = self.clock()
        entry = self._clients.pop(client, None) or _Client()
        self._clients[client] = entry  # most recent last
        while len(self._clients) > self.max_clients:
            self._clients.popitem(last=False)
        if entry.banned_until > now:
            raise LoginBanned(entry.banned_until - now)
        if entry.banned_until:  # the ban is over: a clean slate
            entry.failures.clear()
            entry.banned_until = 0.0
        while entry.failures and entry.failures[0] <= now - self.ban_seconds:
            entry.failures.popleft()
        recent = [t for t in entry.failures if t > now - 60]
        if len(recent) >= self.per_minute:
            raise LoginThrottled(recent[0] + 60 - now)
        entry.failures.append(now)
        if len(entry.failures) >= self.ban_after:
            entry.banned_until = now + self.ban_seconds

    async def succeeded(self, client: str) -> None:
        self._clients.pop(client, None)
