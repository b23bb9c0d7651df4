"""The learning router (SPEC GW-12): reorder a route's candidates by what their calls showed.

`Learner.observe` is a `Gateway.observers` callback: each outcome updates its (route, target)
arm (bandit.py). `Learner.order(route, targets)` is called by `Gateway.plan` for every route
plan and returns the candidates to walk: the preferred order (by posterior mean score, with the
configured order as the prior) or, within the exploration budget, a Thompson-sampled order
whose first candidate is not the preferred one. The budget is hard: over the last `WINDOW`
decisions of a route at most `exploration` of them were led by a non-preferred candidate.
With `learning.enabled` false, order() returns the configured order and only records the
decision; the statistics and `snapshot()` (GET /evolution) work either way.

The preference is recomputed lazily, once per new outcome, so order() costs a cached tuple plus
(when the budget allows) one Thompson draw per candidate: about 1 µs cached, 3 µs otherwise
(bench/learning.py). The state lives on the Gateway; a reload hands the Learner to the new
Gateway, which calls `configure`. Without `redis.url` it is per process; with it the gateway's
learner is a SharedLearner (shared.py): the same state, kept as a view of the statistics
in Redis that every replica adds to. /evolution goes through the async `view()` and `forget()`.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Iterable, Sequence
from typing import Any

from nerve.config import LearningConfig, RouteConfig, Target
from nerve.errors import NotFound
from nerve.gateway.learning.bandit import Arm, rank, sample, scores
from nerve.gateway.outcome import Outcome

__all__ = ["WINDOW", "Learner"]

WINDOW = 200  # recent decisions per route: exploration budget and first-choice shares
FORGET = 10  # evidence of a candidate not called halves every FORGET * half_life route calls
RECENT = 50  # outcomes kept for /evolution


class _Route:
    __slots__ = ("arms", "best", "by_key", "dirty", "explored", "firsts", "noted", "preferred",
                 "scores", "sent", "stds", "targets", "window")  # fmt: skip

    def __init__(self, targets: tuple[Target, ...], previous: _Route | None) -> None:
        self.targets = targets
        old: dict[str, Arm] = previous.by_key if previous is not None else {}
        self.arms = [old.get(str(t)) or Arm(t) for t in targets]
        self.by_key: dict[str, Arm] = {a.key: a for a in self.arms}
        self.window: deque[tuple[int, bool]] = deque()  # (first candidate's index, explored)
        self.firsts = [0] * len(targets)
        self.explored = 0
        self.noted = self.sent = 0  # decisions made; of them, shared (shared.py)
        self.dirty = True
        self.preferred: list[int] = list(range(len(targets)))
        self.best = targets
        self.scores = [0.0] * len(targets)
        self.stds = [0.0] * len(targets)

    def note(self, first: int, explored: bool) -> None:
        if len(self.window) == WINDOW:
            old_first, old_explored = self.window.popleft()
            self.firsts[old_first] -= 1
            self.explored -= old_explored
        self.window.append((first, explored))
        self.firsts[first] += 1
        self.explored += explored
        self.noted += 1

    def unsent(self) -> list[str]:
        """The decisions not yet shared (at most a window's): first candidate, "*" if explored."""
        n = min(self.noted - self.sent, len(self.window))
        if n <= 0:
            return []
        keys = [a.key for a in self.arms]
        return [("*" if explored else "") + keys[first] for first, explored in
                list(self.window)[-n:]]  # fmt: skip


class Learner:
    def __init__(
        self,
        config: LearningConfig,
        routes: Iterable[RouteConfig] = (),
        *,
        rng: random.Random | None = None,
    ) -> None:
        self.rng = rng or random.Random()
        self.recent: deque[Outcome] = deque(maxlen=RECENT)
        self._routes: dict[str, _Route] = {}
        self.configure(config, routes)

    def configure(self, config: LearningConfig, routes: Iterable[RouteConfig]) -> None:
        """Adopt a (re)loaded config: arms of candidates that remain keep their statistics."""
        self.config = config
        self._decay = 0.5 ** (1 / config.half_life_calls)
        self._forget = 0.5 ** (1 / (FORGET * config.half_life_calls))
        self._routes = {r.name: _Route(tuple(r.targets), self._routes.get(r.name)) for r in routes}

    def order(self, route: str, targets: tuple[Target, ...]) -> tuple[Target, ...]:
        """The candidates to walk, best first. Unknown routes or targets come back unchanged."""
        st = self._routes.get(route)
        if st is None or (targets is not st.targets and targets != st.targets):
            return targets
        if not self.config.enabled or len(targets) < 2:
            st.note(0, False)
            return targets
        if st.dirty:
            self._rank(st)
        first, chosen, explored = st.preferred[0], st.best, False
        budget = self.config.exploration
        if budget > 0 and st.explored + 1 <= budget * (len(st.window) + 1):
            drawn = sample(st.scores, st.stds, self.rng)
            if drawn[0] != first:
                first, chosen, explored = drawn[0], tuple([targets[i] for i in drawn]), True
        st.note(first, explored)
        return chosen

    def observe(self, outcome: Outcome) -> None:
        self.recent.append(outcome)
        st = self._routes.get(outcome.route)
        arm = st.by_key.get(outcome.target) if st is not None else None
        if st is None or arm is None:
            return  # an explicit provider/model, or a candidate the route no longer has
        for other in st.arms:
            other.decay(self._forget)
        arm.decay(self._decay / self._forget)
        arm.add(outcome, 1.0 - self._decay)
        st.dirty = True

    def _rank(self, st: _Route) -> None:
        c = self.config
        st.scores, st.stds = scores(st.arms, c.latency_weight, c.cost_weight)
        st.preferred = rank(st.arms, st.scores, c.min_calls)
        st.best = tuple([st.targets[i] for i in st.preferred])
        st.dirty = False

    def check(self, route: str | None) -> None:
        if route is not None and route not in self._routes:
            raise NotFound(f"unknown route {route!r}; known: {', '.join(self._routes)}",
                           param="route", code="route_not_found")  # fmt: skip

    def reset(self, route: str | None = None) -> dict[str, Any]:
        """Forget what was learnt (one route or all); returns the snapshot being cleared."""
        self.check(route)
        previous = self.snapshot()
        for name, st in self._routes.items():
            if route is None or name == route:
                self._routes[name] = _Route(st.targets, None)
        if route is None:
            self.recent.clear()
        return previous

    async def view(self) -> dict[str, Any]:
        """What GET /evolution shows (a SharedLearner reads every replica's statistics)."""
        return self.snapshot()

    async def forget(self, route: str | None = None) -> dict[str, Any]:
        """What POST /evolution/reset does (a SharedLearner resets it for every replica)."""
        return self.reset(route)

    def snapshot(self) -> dict[str, Any]:
        routes = {name: self._describe(st, st.arms, st.firsts, len(st.window), st.explored)
                  for name, st in self._routes.items()}  # fmt: skip
        return self._snapshot(routes, [o.to_dict() for o in reversed(self.recent)])

    def _snapshot(self, routes: dict[str, Any], recent: list[Any]) -> dict[str, Any]:
        return {"config": self.config.model_dump(), "window": WINDOW, "routes": routes,
                "recent": recent}  # fmt: skip

    def _describe(
        self, st: _Route, arms: Sequence[Arm], firsts: Sequence[int], seen: int, explored: int
    ) -> dict[str, Any]:
        """One route's statistics, scores and preference: those of `arms` (of `st.targets`)."""
        c = self.config
        score, _ = scores(arms, c.latency_weight, c.cost_weight)
        best = [str(st.targets[i]) for i in rank(arms, score, c.min_calls)]
        candidates = {}
        for i, arm in enumerate(arms):
            evidence = arm.ok + arm.fail
            candidates[arm.key] = {
                "calls": arm.calls,
                "errors": arm.errors,
                "recent_calls": round(evidence, 2),  # discounted: what the score weighs
                "success_rate": round(arm.ok / evidence, 4) if evidence > 1e-9 else None,
                "latency_ms": None if arm.latency is None else round(arm.latency * 1000, 3),
                "cost_per_call_usd": arm.cost,
                "score": round(score[i], 4),
                "rated": arm.calls >= c.min_calls,
                "first_choice_share": round(firsts[i] / seen, 4) if seen else None,
            }
        return {
            "preference": best,
            "configured": [str(t) for t in st.targets],
            "decisions": seen,
            "explored_share": round(explored / seen, 4) if seen else 0.0,
            "candidates": candidates,
        }
