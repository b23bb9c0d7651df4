"""What one gateway call is made of: its `Plan` (route, ordered candidates), the `Gate` asked
ahead for a candidate, who `Served` it (the x-nerve-* headers and the stats row), and an open
`Streaming` answer. Plain data: core.py walks plans, endpoint.py and the dialects read them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import quote

from nerve.config import Target
from nerve.gateway.providers import Stream
from nerve.gateway.router import Decision

if TYPE_CHECKING:
    from nerve.telemetry.attempt import Attempt

__all__ = ["EXPLICIT", "Gate", "Plan", "Served", "Streaming", "header_value"]

EXPLICIT = "explicit"  # the plan's route when the client named provider/model itself


@dataclass(frozen=True, slots=True)
class Plan:
    route: str
    targets: tuple[Target, ...]
    decision: Decision | None  # None when the client named a route or a model
    key: str | None = None  # the API key's name, for the stats (None without keys)
    user: str | None = None  # the request's `user` field, for the stats

    @property
    def named(self) -> bool:
        """The client named the provider/model itself (not a route's configured target)."""
        return self.route == EXPLICIT


@dataclass(frozen=True, slots=True)
class Gate:
    """A candidate's gate, asked ahead (with the admission, in one Redis round trip)."""

    target: str
    cooling: float  # seconds it still rests after a 429 (0: none)
    admitted: bool  # whether its breaker lets this call through


@dataclass(slots=True)
class Served:
    """Who answered, and what was tried before: the x-nerve-* headers and the stats row."""

    route: str
    target: Target
    fallback: bool
    started: float
    attempts: list[tuple[str, str]] = field(default_factory=list)
    decided_by: str | None = None  # the router's layer when the client asked for "auto"
    key: str | None = None
    user: str | None = None
    span: Attempt | None = None  # its trace span while tracing is on (SPEC OB-1)

    def failed(self, error: BaseException) -> None:
        """The call failed in a way the gateway records no outcome for: its span says so."""
        if self.span is not None:
            self.span.fail(error)

    def headers(self) -> dict[str, str]:
        headers = {
            "x-nerve-route": header_value(self.route),
            "x-nerve-provider": header_value(self.target.provider),
            "x-nerve-model": header_value(self.target.model),
            "x-nerve-fallback": "true" if self.fallback else "false",
        }
        if self.decided_by is not None:  # which layer of the cascade chose the route
            headers["x-nerve-decided-by"] = self.decided_by
        return headers


def header_value(text: str) -> str:
    """`text` as a header can always carry it: printable ASCII as is, anything else %-escaped
    (UTF-8). A model name from the config is not checked, and a header the server refuses
    would leave the client with no answer after the upstream was already paid."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(c if c.isascii() and c.isprintable() else quote(c, safe="") for c in text)


@dataclass(slots=True)
class Streaming:
    """An open stream and who serves it; `end` records what the forwarding ended with."""

    stream: Stream
    served: Served
    error: Exception | None = None
    ended: bool = False  # the forwarding reported its end (an error after it is not the call's)

    def end(self, error: Exception | None) -> None:
        self.error, self.ended = error, True
