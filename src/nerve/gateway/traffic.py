"""nerve on the traffic path (SPEC TP-1, TP-2): what a request gets between client and model.

Per route, and per configured key (its `guard`/`memory` override the route's), a request may
get the tool-call guard (`guard/`: the tool calls the answer carries are judged by the one
safety engine; blocked ones never reach the client) and memory (`recall`: the user's context
block added to the request; `store`: the exchange kept as turns afterwards).

An endpoint asks `TrafficPath.passage(...)` once the request is planned, and sends the request
and its answer through the `Passage`: `recall(body)` before the candidates are called,
`answer(raw)` for a whole answer, `frames(frame)`/`end(error)` for a stream's frames. A client
naming provider/model gets the `default` route's settings. What was blocked, flagged,
recalled and stored is logged and counted in the shared stats (`/stats` "traffic").
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from nerve.access.principal import Principal
from nerve.config import Config, PathMemoryConfig
from nerve.gateway.core import Plan
from nerve.gateway.dialects.base import Wire
from nerve.gateway.guard import GuardStream, Judged, PassStream, ToolGuard
from nerve.gateway.recall import PathMemory, TextTap, answer_text, path_user
from nerve.gateway.router import DEFAULT_ROUTE
from nerve.gateway.stats import Stats
from nerve.safety.engine import SafetyEngine
from nerve.telemetry import active

__all__ = ["Passage", "TrafficPath"]

log = logging.getLogger("nerve.gateway")


class TrafficPath:
    """The guards and memory settings of one config, built once (a reload builds another)."""

    def __init__(
        self, config: Config, engine: SafetyEngine, memory: PathMemory, stats: Stats
    ) -> None:
        self.memory = memory
        self.stats = stats
        self._routes: dict[str, tuple[ToolGuard, PathMemoryConfig]] = {
            r.name: (ToolGuard(r.guard, engine), r.memory) for r in config.routes
        }
        # A key's own settings (config keys only: managed keys carry no traffic policy).
        keys = config.server.api_keys
        self._key_guards = {k.name: ToolGuard(k.guard, engine) for k in keys if k.guard}
        self._key_memory = {k.name: k.memory for k in keys if k.memory}

    def passage(
        self, wire: Wire | None, plan: Plan, principal: Principal,
        headers: Mapping[str, str], view: Mapping[str, Any],
    ) -> Passage | None:  # fmt: skip
        """What this request gets on the path; None when nothing (the common, free case)."""
        if wire is None:
            return None
        guard, memory = self._routes.get(plan.route) or self._routes[DEFAULT_ROUTE]
        if not principal.managed:
            guard = self._key_guards.get(principal.name, guard)
            memory = self._key_memory.get(principal.name, memory)
        guarded = guard.mode != "off"
        user = path_user(principal, headers, view) if memory.recall or memory.store else None
        if not guarded and user is None and not memory.recall:
            return None
        return Passage(self, wire, plan.route, guard if guarded else None, memory, user)


class Passage:
    """One request's way through the traffic path."""

    def __init__(
        self, path: TrafficPath, wire: Wire, route: str, guard: ToolGuard | None,
        memory: PathMemoryConfig, user: str | None,
    ) -> None:  # fmt: skip
        self._path = path
        self.wire: Wire = wire
        self.route = route
        self.guard = guard
        self.user = user
        self.recalls = memory.recall
        self.stores = memory.store and user is not None
        self.recalled = 0
        self._body: dict[str, Any] = {}
        self._filter: GuardStream | PassStream | None = None
        self._tap: TextTap | None = None

    async def recall(self, body: dict[str, Any]) -> dict[str, Any]:
        """`body` with the user's context block when recall is on (never raises)."""
        self._body = body
        if self.recalls and self.user is not None:
            body, self.recalled = await self._path.memory.recall(self.wire, body, self.user)
        return body

    def headers(self) -> dict[str, str]:
        """What the path adds to the answer's headers before the answer is read."""
        return {"x-nerve-memory": str(self.recalled)} if self.recalls else {}

    async def answer(self, raw: bytes) -> tuple[bytes, dict[str, str]]:
        """A whole answer: the bytes to send (blocked calls replaced), and the guard's header."""
        headers: dict[str, str] = {}
        if self.guard is not None:
            outcome = await self.guard.judge_body(self.wire, raw)
            raw = outcome.body
            self._report(outcome.blocked, outcome.flagged, outcome.error)
            if outcome.blocked or outcome.flagged:
                headers["x-nerve-guard"] = "blocked" if outcome.blocked else "flagged"
        if self.stores and self.user is not None:
            self._path.memory.store_later(self.user, self.wire, self._body,
                                          answer_text(self.wire, raw))  # fmt: skip
        return raw, headers

    async def frames(self, frame: bytes) -> list[bytes]:
        """A stream's frame as the client gets it: tool-call frames held until judged."""
        if self.guard is not None:
            if self._filter is None:
                self._filter = self.guard.stream(self.wire)
            out = await self._filter.feed(frame)
        else:
            out = [frame]
        if self.stores:
            if self._tap is None:
                self._tap = self._path.memory.text_tap(self.wire)
            for piece in out:
                self._tap.feed(piece)
        return out

    def end(self, error: BaseException | None) -> list[bytes]:
        """The stream is over: what the guard still held (nothing on an error: a call not
        judged is never sent), and the exchange stored when it finished whole."""
        out: list[bytes] = []
        if self._filter is not None:
            if error is None:
                out = self._filter.finish()
                if self._tap is not None:
                    for piece in out:
                        self._tap.feed(piece)
            blocked, flagged = self._filter.blocked, self._filter.flagged
            self._report(blocked, flagged, self._filter.error)
            if active.tracing is not None and (blocked or flagged):  # SPEC OB-1: nerve.guard
                active.tracing.guarded("blocked" if blocked else "flagged")
        if error is None and self.stores and self.user is not None:
            text = self._tap.text if self._tap is not None else ""
            self._path.memory.store_later(self.user, self.wire, self._body, text)
        return out

    def _report(
        self, blocked: Sequence[Judged], flagged: Sequence[Judged], error: str | None
    ) -> None:
        stats = self._path.stats
        for what, calls in (("blocked", blocked), ("flagged", flagged)):
            for call in calls:
                log.warning("GUARD %s route=%s %s (%s risk): %s", what.upper(), self.route,
                            call.tool, call.risk, call.reason)  # fmt: skip
            if calls:
                stats.record_traffic("guard", what, len(calls))
        if error is not None:
            log.error("GUARD FAILED route=%s: %s", self.route, error)
            stats.record_traffic("guard", "failed")
