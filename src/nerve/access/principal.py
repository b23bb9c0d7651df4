"""Who is calling and what their key allows: the `Principal` the boundary puts on each request.

Routes never look at keys; they ask the principal: `principal_of(scope).check_user(user_id)`
raises Forbidden naming the user, `allows_route`/`allows_target` answer for the gateway. A
request that did not pass the boundary (in-process callers, `nerve mcp` over stdio, tests that
build one router) is LOCAL: the machine's own user, allowed everything.
"""

from __future__ import annotations

import fnmatch
import hashlib
from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any, Literal

from nerve.errors import Forbidden

__all__ = ["LOCAL", "SCOPE_KEY", "Budget", "Principal", "digest", "principal_of"]

SCOPE_KEY = "nerve.principal"
Period = Literal["day", "week", "month", "total"]


def digest(token: bytes) -> bytes:
    """What a key is known by in memory and in the store: its SHA-256 (keys are random and
    long, so a fast hash is enough; nothing below ever holds the key itself)."""
    return hashlib.sha256(token).digest()


@dataclass(frozen=True, slots=True)
class Budget:
    usd: float
    period: Period


@dataclass(frozen=True, slots=True)
class Principal:
    name: str  # the key's name ("local" without keys)
    client: str = "local"  # who the rate limits count: "key:<name>" or "ip:<address>"
    hint: str = ""  # the key's last 4 characters, for lists and logs
    routes: tuple[str, ...] | None = None  # globs; None: any
    models: tuple[str, ...] | None = None  # globs over provider/model; None: any
    users: tuple[str, ...] | None = None  # memory users; None: any
    rpm: int | None = None
    tpm: int | None = None
    max_parallel: int | None = None
    budget: Budget | None = None
    managed: bool = False  # made by `nerve keys create` (in the store), not the config file

    @property
    def limited(self) -> bool:
        """Whether the key has limits of its own beyond the server's."""
        return self.rpm is not None or self.max_parallel is not None

    @property
    def metered(self) -> bool:
        """Whether calls must reserve against a ledger (tokens per minute, or money)."""
        return self.tpm is not None or self.budget is not None

    def allows_route(self, route: str) -> bool:
        return self.routes is None or _matches(route, self.routes)

    def allows_target(self, target: str) -> bool:
        return self.models is None or _matches(target, self.models)

    def check_route(self, route: str) -> None:
        if not self.allows_route(route):
            raise Forbidden(
                f"key {self.name!r} may not use route {route!r} "
                f"(allowed: {', '.join(self.routes or ())})",
                code="route_not_allowed",
            )

    def check_user(self, user_id: str) -> None:
        """Raise Forbidden unless this key may read and write `user_id`'s data."""
        if self.users is not None and user_id not in self.users:
            raise Forbidden(
                f"key {self.name!r} may not act for user {user_id!r} "
                f"(allowed: {', '.join(self.users) or 'none'})",
                code="user_not_allowed",
            )

    def default_user(self, fallback: str) -> str:
        """The user a request that names none acts for: the key's first user, else `fallback`."""
        return self.users[0] if self.users else fallback

    def user_for(self, asked: str | None, fallback: str) -> str:
        """The user a request acts for, checked: the one it names, else `default_user`. Every
        surface that reads or writes a user's data (REST, MCP, web chat) asks this once."""
        user = asked or self.default_user(fallback)
        self.check_user(user)
        return user

    def view(self) -> dict[str, Any]:
        """What may be shown about the key (never the key): for /stats, the admin API, logs."""
        return {
            "name": self.name,
            "key": f"…{self.hint}" if self.hint else None,
            "managed": self.managed,
            "routes": list(self.routes) if self.routes is not None else None,
            "models": list(self.models) if self.models is not None else None,
            "users": list(self.users) if self.users is not None else None,
            "rpm": self.rpm,
            "tpm": self.tpm,
            "max_parallel": self.max_parallel,
            "budget": {"usd": self.budget.usd, "period": self.budget.period}
            if self.budget
            else None,
        }


def _matches(name: str, globs: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(name, g) for g in globs)


LOCAL = Principal("local")


def principal_of(scope: MutableMapping[str, Any]) -> Principal:
    """The principal the boundary found for this request (LOCAL if it did not pass one)."""
    found = scope.get(SCOPE_KEY)
    return found if isinstance(found, Principal) else LOCAL
