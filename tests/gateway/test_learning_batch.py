"""A batch of outcomes as one update (SPEC GW-12, GW-19): the same arithmetic as the learner's.

What replicas push to Redis is a Batch; these tests hold it to the in-process learner on random
outcome sequences, cut into batches anywhere, and to its composition (a failed push is pushed
with the next one).
"""

from __future__ import annotations

import copy
import random

import pytest

from nerve.config import LearningConfig, RouteConfig, Target
from nerve.gateway.learning.bandit import Arm
from nerve.gateway.learning.batch import Batch
from nerve.gateway.learning.learner import Learner
from nerve.gateway.outcome import Outcome
from nerve.gateway.stats import Usage

A, B, C = (Target(provider=p, model="m") for p in "abc")
ROUTE = RouteConfig(name="r", model=A, fallbacks=[B, C])
USAGE = Usage(prompt_tokens=10, completion_tokens=5, total_tokens=15)
CONFIG = LearningConfig(enabled=True, half_life_calls=7)


def outcomes(seed: int, n: int) -> list[Outcome]:
    """Random calls on a, b and c: failures, answers with and without usage."""
    rng, out = random.Random(seed), []
    for _ in range(n):
        target, ok, priced = rng.choice("abc"), rng.random() < 0.7, rng.random() < 0.8
        usage = USAGE if ok and priced else None
        out.append(Outcome("r", f"{target}/m", ok, rng.uniform(0.1, 3), usage,
                           rng.uniform(0, 0.01), False, None, (), None, 0.0))  # fmt: skip
    return out


def factors(learner: Learner) -> tuple[float, float]:
    return learner._decay, learner._forget


def state(arms: list[Arm]) -> dict[str, tuple[float, ...]]:
    nan = float("nan")
    return {a.key: (a.calls, a.errors, a.ok, a.fail, nan if a.latency is None else a.latency,
                    nan if a.cost is None else a.cost) for a in arms}  # fmt: skip


def approx(arms: list[Arm]) -> dict[str, object]:
    return {k: pytest.approx(v, rel=1e-9, nan_ok=True) for k, v in state(arms).items()}


def fresh() -> list[Arm]:
    return [Arm(t) for t in ROUTE.targets]


@pytest.mark.parametrize("seed", range(5))
def test_batches_cut_anywhere_give_the_learners_statistics(seed):
    """Applying the batches one after another = observing every outcome in process."""
    learner = Learner(CONFIG, [ROUTE])
    calls = outcomes(seed, 300)
    for o in calls:
        learner.observe(o)
    rng, arms, i = random.Random(seed), fresh(), 0
    while i < len(calls):
        batch = Batch(*factors(learner))
        for o in calls[i : i + rng.randint(1, 40)]:
            batch.add("r", o)
            i += 1
        for arm in arms:
            batch.routes["r"].apply(arm)
    assert state(learner._routes["r"].arms) == approx(arms)
    assert learner._routes["r"].arms[0].calls > 0 and arms[0].latency is not None


def test_a_batch_applied_to_a_learnt_state_continues_it():
    """The map is affine: it holds from any starting state, not only from nothing."""
    learner = Learner(CONFIG, [ROUTE])
    before, after = outcomes(1, 100), outcomes(2, 60)
    for o in before:
        learner.observe(o)
    arms = [copy.copy(arm) for arm in learner._routes["r"].arms]  # the state learnt so far
    batch = Batch(*factors(learner))
    for o in after:
        learner.observe(o)
        batch.add("r", o)
    for arm in arms:
        batch.routes["r"].apply(arm)
    assert state(learner._routes["r"].arms) == approx(arms)


def test_two_batches_composed_are_the_one_batch_of_both():
    """A push that failed is kept and pushed before the outcomes that came after it."""
    learner = Learner(CONFIG, [ROUTE])
    for o in outcomes(9, 50):  # what Redis held before: composition must hold from any state
        learner.observe(o)
    decay, forget = factors(learner)
    calls = outcomes(3, 120)
    whole, first, second = (Batch(decay, forget) for _ in range(3))
    for o in calls:
        whole.add("r", o)
    for o in calls[:50]:
        first.add("r", o)
    for o in calls[50:]:
        second.add("r", o)
    composed = first.then(second)
    one = [copy.copy(arm) for arm in learner._routes["r"].arms]
    two = [copy.copy(arm) for arm in learner._routes["r"].arms]
    for arm in one:
        whole.routes["r"].apply(arm)
    for arm in two:
        composed.routes["r"].apply(arm)
    assert state(one) == approx(two)
    assert composed.routes["r"].k == 120


def test_an_arm_the_batch_never_called_is_only_forgotten():
    decay, forget = factors(Learner(CONFIG, [ROUTE]))
    batch = Batch(decay, forget)
    for o in outcomes(4, 10):
        if o.target != "c/m":
            batch.add("r", o)
    arm = Arm(C)
    arm.ok, arm.fail, arm.latency = 4.0, 2.0, 1.5
    batch.routes["r"].apply(arm)
    k = batch.routes["r"].k
    assert (arm.ok, arm.fail) == pytest.approx((4.0 * forget**k, 2.0 * forget**k))
    assert arm.latency == 1.5 and arm.calls == 0


def test_dropping_a_route_forgets_only_its_outcomes():
    batch = Batch(*factors(Learner(CONFIG, [ROUTE])))
    batch.add("r", outcomes(5, 1)[0])
    batch.add("other", Outcome("other", "a/m", True, 1.0, None, 0.0, False, None, (), None, 0))
    batch.drop("r")
    assert set(batch.routes) == {"other"} and batch
    batch.drop(None)
    assert not batch
