"""A run of a route's outcomes as one update (SPEC GW-12, GW-19): what a replica owes Redis.

An arm's discounted evidence changes linearly over a route's calls (bandit.py): each call
multiplies it by `forget`, or by `decay` and adds 1 when the call was its own; its latency and
cost EWMAs move as `x ← decay·x + (1 − decay)·sample`. So any run of calls, whatever the state
it starts from, is an affine map per arm:

    ok' = a·ok + ok_d     fail' = a·fail + fail_d     latency' = g·latency + e  (l0 when unknown)

`Batch.add` keeps those coefficients up to date as outcomes arrive (O(arms touched) per outcome,
like the in-process update). The Lua script in redis.py applies them to the state in
Redis atomically, however the replicas' batches interleave, so the discounting is that of one
learner seeing the batches one after another. `apply` is the same map in Python (the local view
is the state pulled from Redis plus the batch not yet pushed) and `then` composes two batches
(a flush that failed is pushed with the next one).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nerve.gateway.learning.bandit import Arm
from nerve.gateway.outcome import Outcome

__all__ = ["Batch", "Delta", "RouteBatch"]


@dataclass(slots=True)
class _Ewma:
    """x' = g·x + e for a known x, l0 for an unknown one; the identity until a sample comes."""

    g: float = 1.0
    e: float = 0.0
    l0: float | None = None

    def add(self, x: float, decay: float) -> None:
        alpha = 1.0 - decay
        self.g *= decay
        self.e = decay * self.e + alpha * x
        self.l0 = x if self.l0 is None else self.l0 + alpha * (x - self.l0)

    def apply(self, x: float | None) -> float | None:
        return self.l0 if x is None else self.g * x + self.e

    def then(self, later: _Ewma) -> _Ewma:
        return _Ewma(self.g * later.g, later.g * self.e + later.e, later.apply(self.l0))


@dataclass(slots=True)
class Delta:
    """One arm's update over a batch: evidence factor and offsets, raw counts, EWMA maps."""

    a: float = 1.0
    ok: float = 0.0
    fail: float = 0.0
    calls: int = 0
    errors: int = 0
    latency: _Ewma = field(default_factory=_Ewma)
    cost: _Ewma = field(default_factory=_Ewma)

    def scale(self, factor: float) -> None:
        self.a *= factor
        self.ok *= factor
        self.fail *= factor

    def apply(self, arm: Arm) -> None:
        arm.ok = self.a * arm.ok + self.ok
        arm.fail = self.a * arm.fail + self.fail
        arm.calls += self.calls
        arm.errors += self.errors
        arm.latency = self.latency.apply(arm.latency)
        arm.cost = self.cost.apply(arm.cost)

    def then(self, later: Delta) -> Delta:
        return Delta(
            self.a * later.a, later.a * self.ok + later.ok, later.a * self.fail + later.fail,
            self.calls + later.calls, self.errors + later.errors,
            self.latency.then(later.latency), self.cost.then(later.cost),
        )  # fmt: skip


@dataclass(slots=True)
class RouteBatch:
    """A route's calls in the batch: `k` of them; arms not touched were only forgotten (`a`)."""

    k: int = 0
    a: float = 1.0
    arms: dict[str, Delta] = field(default_factory=dict)

    def delta(self, key: str) -> Delta:
        """The arm's delta; an arm the batch did not touch was only forgotten."""
        return self.arms.get(key) or Delta(a=self.a)

    def apply(self, arm: Arm) -> None:
        self.delta(arm.key).apply(arm)

    def then(self, later: RouteBatch) -> RouteBatch:
        keys = self.arms.keys() | later.arms.keys()
        arms = {k: self.delta(k).then(later.delta(k)) for k in keys}
        return RouteBatch(self.k + later.k, self.a * later.a, arms)


class Batch:
    """Every route's outcomes since the last push, with the factors of the learning config."""

    __slots__ = ("decay", "forget", "routes")

    def __init__(self, decay: float, forget: float) -> None:
        self.decay = decay
        self.forget = forget
        self.routes: dict[str, RouteBatch] = {}

    def __bool__(self) -> bool:
        return bool(self.routes)

    def add(self, route: str, outcome: Outcome) -> None:
        """The in-process update of Learner.observe, on the coefficients."""
        rb = self.routes.get(route) or self.routes.setdefault(route, RouteBatch())
        own = rb.arms.get(outcome.target)
        if own is None:
            own = rb.arms[outcome.target] = Delta(a=rb.a)
        forget, decay = self.forget, self.decay
        for delta in rb.arms.values():
            delta.scale(decay if delta is own else forget)
        rb.a *= forget
        rb.k += 1
        own.calls += 1
        if not outcome.ok:
            own.errors += 1
            own.fail += 1.0
            return
        own.ok += 1.0
        own.latency.add(outcome.latency_s, decay)
        if outcome.usage is not None:
            own.cost.add(outcome.cost_usd, decay)

    def then(self, later: Batch) -> Batch:
        """This batch followed by `later` (with later's factors for what comes next)."""
        out = Batch(later.decay, later.forget)
        for name in self.routes.keys() | later.routes.keys():
            first, second = self.routes.get(name), later.routes.get(name)
            if first is None:
                out.routes[name] = later.routes[name]
            else:
                out.routes[name] = first if second is None else first.then(second)
        return out

    def drop(self, route: str | None) -> None:
        """Forget the outcomes of one route (or all): what they were added to was reset."""
        if route is None:
            self.routes.clear()
        else:
            self.routes.pop(route, None)
