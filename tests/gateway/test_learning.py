"""The learning router's decisions (SPEC GW-12), on the Learner itself with a seeded random."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from nerve.config import LearningConfig, RouteConfig, Target
from nerve.errors import NotFound
from nerve.gateway.learning.learner import WINDOW, Learner
from nerve.gateway.outcome import Outcome
from nerve.gateway.stats import Usage

A, B, C = (Target(provider=p, model="m") for p in "abc")
ROUTE = RouteConfig(name="r", model=A, fallbacks=[B, C])
PAIR = RouteConfig(name="pair", model=A, fallbacks=[B])
USAGE = Usage(prompt_tokens=10, completion_tokens=5, total_tokens=15)
Behaviour = Callable[[str], tuple[bool, float, float]]  # target -> (ok, latency_s, cost_usd)


def learner(route: RouteConfig = ROUTE, seed: int = 1, **config: object) -> Learner:
    settings = LearningConfig.model_validate({"enabled": True, **config})
    return Learner(settings, [route], rng=random.Random(seed))


def outcome(target: Target, ok: bool = True, latency: float = 1.0, cost: float = 0.001,
            route: str = "r") -> Outcome:  # fmt: skip
    return Outcome(route, str(target), ok, latency, USAGE if ok else None, cost if ok else 0.0,
                   False, None if ok else "UpstreamStatus: 500", (), None, 0.0)  # fmt: skip


def feed(lrn: Learner, target: Target, n: int, route: str = "r", **kw: object) -> None:
    for _ in range(n):
        lrn.observe(outcome(target, route=route, **kw))  # type: ignore[arg-type]


def request(lrn: Learner, route: RouteConfig, behaviour: Behaviour) -> tuple[Target, ...]:
    """One request walked like the gateway does: candidates in order until one answers."""
    plan = lrn.order(route.name, tuple(route.targets))
    for target in plan:
        ok, latency, cost = behaviour(str(target))
        lrn.observe(outcome(target, ok, latency, cost, route=route.name))
        if ok:
            break
    return plan


def preference(lrn: Learner, route: str = "r") -> list[str]:
    prefs: list[str] = lrn.snapshot()["routes"][route]["preference"]
    return prefs


def healthy(target: str) -> tuple[bool, float, float]:
    return True, 1.0, 0.001


def test_a_candidate_that_starts_failing_loses_first_place_within_a_few_requests():
    lrn = learner(PAIR, exploration=0)
    for _ in range(100):
        assert request(lrn, PAIR, healthy)[0] == A
    failing: Behaviour = lambda t: (t != "a/m", 1.0, 0.001)  # noqa: E731
    firsts = [request(lrn, PAIR, failing)[0] for _ in range(30)]
    switched = firsts.index(B)
    assert switched <= 15, f"still led by the failing candidate after {switched} requests"
    assert set(firsts[switched:]) == {B}, "once switched, the failing candidate is not first"
    assert preference(lrn, "pair") == ["b/m", "a/m"]


def test_exploration_never_leads_more_than_its_share_of_decisions():
    lrn = learner(exploration=0.05)  # three equal candidates: Thompson sampling wants to explore
    explored = 0
    for i in range(2000):
        best = preference(lrn)[0]
        explored += str(request(lrn, ROUTE, healthy)[0]) != best
        assert lrn.snapshot()["routes"]["r"]["explored_share"] <= 0.05
        assert explored <= 0.05 * (i + 1) + 1
    assert explored > 0.03 * 2000, "exploration happens, up to its budget"


def test_without_exploration_the_preferred_order_always_leads():
    lrn = learner(exploration=0)
    for _ in range(300):
        assert [str(t) for t in request(lrn, ROUTE, healthy)] == preference(lrn)


@pytest.mark.parametrize("weight", [0.2, 0.0])
def test_the_cost_weight_prefers_the_cheaper_of_two_equal_candidates(weight):
    lrn = learner(PAIR, cost_weight=weight, latency_weight=0)
    for _ in range(20):
        feed(lrn, A, 1, route="pair", cost=0.002)
        feed(lrn, B, 1, route="pair", cost=0.001)
    assert preference(lrn, "pair") == (["b/m", "a/m"] if weight else ["a/m", "b/m"])


@pytest.mark.parametrize("weight", [0.2, 0.0])
def test_the_latency_weight_prefers_the_faster_of_two_equal_candidates(weight):
    lrn = learner(PAIR, latency_weight=weight, cost_weight=0)
    for _ in range(20):
        feed(lrn, A, 1, route="pair", latency=2.0)
        feed(lrn, B, 1, route="pair", latency=0.5)
    assert preference(lrn, "pair") == (["b/m", "a/m"] if weight else ["a/m", "b/m"])


def test_a_challenger_needs_min_calls_before_it_displaces_the_configured_primary():
    lrn = learner(min_calls=5)
    feed(lrn, A, 10, ok=False)
    feed(lrn, A, 10)
    feed(lrn, C, 4)
    assert preference(lrn) == ["a/m", "b/m", "c/m"], "4 perfect calls are not enough"
    feed(lrn, C, 1)
    assert preference(lrn) == ["c/m", "b/m", "a/m"], "untried b keeps its place"


def test_an_untried_fallback_never_moves_up_on_its_own():
    lrn = learner()
    feed(lrn, A, 50, ok=False)  # a is bad, but b and c were never tried
    assert preference(lrn) == ["a/m", "b/m", "c/m"]


def test_a_reset_restores_the_configured_order():
    lrn = learner(exploration=0)
    feed(lrn, A, 20, ok=False)
    feed(lrn, B, 20)
    assert lrn.order("r", tuple(ROUTE.targets))[0] == B
    previous = lrn.reset()
    assert previous["routes"]["r"]["candidates"]["b/m"]["calls"] == 20
    assert lrn.order("r", tuple(ROUTE.targets)) == (A, B, C)
    snapshot = lrn.snapshot()
    assert snapshot["routes"]["r"]["candidates"]["b/m"]["calls"] == 0
    assert snapshot["recent"] == []


def test_a_reset_of_one_route_leaves_the_others():
    lrn = Learner(LearningConfig(enabled=True), [ROUTE, PAIR])
    feed(lrn, A, 3, route="r")
    feed(lrn, A, 3, route="pair")
    lrn.reset("pair")
    routes = lrn.snapshot()["routes"]
    assert routes["r"]["candidates"]["a/m"]["calls"] == 3
    assert routes["pair"]["candidates"]["a/m"]["calls"] == 0
    with pytest.raises(NotFound, match="unknown route 'nope'"):
        lrn.reset("nope")


def test_disabled_learning_keeps_the_configured_order_but_still_records():
    lrn = learner(enabled=False)
    feed(lrn, A, 20, ok=False)
    feed(lrn, B, 20)
    for _ in range(10):
        assert lrn.order("r", tuple(ROUTE.targets)) == (A, B, C)
    route = lrn.snapshot()["routes"]["r"]
    assert route["preference"] == ["b/m", "a/m", "c/m"], "what it would choose"
    assert route["candidates"]["a/m"]["errors"] == 20
    assert route["candidates"]["a/m"]["first_choice_share"] == 1.0
    assert route["decisions"] == 10


def test_outcomes_of_other_routes_or_candidates_only_reach_the_recent_log():
    lrn = learner()
    lrn.observe(outcome(Target(provider="x", model="y"), route="explicit"))
    lrn.observe(outcome(Target(provider="x", model="y")))  # not a candidate of r
    assert all(c["calls"] == 0 for c in lrn.snapshot()["routes"]["r"]["candidates"].values())
    assert len(lrn.snapshot()["recent"]) == 2
    assert lrn.order("unknown", (A, B)) == (A, B)


def test_a_reload_keeps_what_was_learnt_about_candidates_that_remain():
    lrn = learner(exploration=0)
    feed(lrn, A, 20, ok=False)
    feed(lrn, C, 20)
    reloaded = RouteConfig(name="r", model=A, fallbacks=[C])  # b removed
    lrn.configure(LearningConfig(enabled=True, exploration=0), [reloaded])
    assert lrn.order("r", tuple(reloaded.targets)) == (C, A)
    assert set(lrn.snapshot()["routes"]["r"]["candidates"]) == {"a/m", "c/m"}


def test_the_snapshot_describes_each_candidate():
    lrn = learner()
    feed(lrn, A, 3, latency=0.25, cost=0.002)
    feed(lrn, A, 1, ok=False)
    request(lrn, ROUTE, healthy)
    snap = lrn.snapshot()
    a = snap["routes"]["r"]["candidates"]["a/m"]
    assert a["calls"] == 5 and a["errors"] == 1 and a["rated"] is True
    assert 0.7 < a["success_rate"] < 0.9
    assert 250 <= a["latency_ms"] < 1000 and a["cost_per_call_usd"] == pytest.approx(0.002, 0.1)
    assert snap["routes"]["r"]["configured"] == ["a/m", "b/m", "c/m"]
    assert snap["config"]["enabled"] is True and snap["window"] == WINDOW
    assert snap["recent"][0]["target"] == "a/m" and snap["recent"][0]["ok"] is True
