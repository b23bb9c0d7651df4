"""The learning router's statistics shared through Redis (SPEC GW-12, GW-19), on the real server.

Learners on separate connections stand for replicas. The reference is one in-process Learner
that saw every outcome: what they build together in Redis must be its statistics. Outages are
real: a TCP forwarder to Redis switched off (test_shared_state.py's Switch); time is a
ManualClock, so the retry pacing needs no sleeping.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from nerve.config import LearningConfig, RedisConfig, RouteConfig, Target
from nerve.gateway.learning.batch import Batch
from nerve.gateway.learning.learner import Learner
from nerve.gateway.learning.redis import RedisLearning
from nerve.gateway.learning.shared import SharedLearner
from nerve.gateway.outcome import Outcome
from nerve.gateway.resilience import ManualClock
from nerve.gateway.resilience.shared import SharedState
from nerve.gateway.stats import Stats, Usage
from tests.conftest import make_config
from tests.fakes.upstream import Reply
from tests.gateway.test_shared_state import Switch, closed_port

A, B = Target(provider="a", model="m"), Target(provider="b", model="m")
PAIR = RouteConfig(name="pair", model=A, fallbacks=[B])
OTHER = RouteConfig(name="other", model=B, fallbacks=[A])
USAGE = Usage(prompt_tokens=10, completion_tokens=5, total_tokens=15)
CONFIG = LearningConfig(enabled=True, exploration=0, half_life_calls=10)


def outcome(target: Target, ok: bool = True, latency: float = 1.0, route: str = "pair") -> Outcome:
    return Outcome(route, str(target), ok, latency, USAGE if ok else None, 0.002 if ok else 0.0,
                   False, None if ok else "UpstreamStatus: 500", (), None, 0.0)  # fmt: skip


def feed(learners: list[Learner], *outcomes: Outcome) -> None:
    for o in outcomes:
        for learner in learners:
            learner.observe(o)


def candidates(snapshot: dict[str, Any], route: str = "pair") -> dict[str, Any]:
    """A route's statistics, without the share of first choices (decisions are per learner)."""
    rows = snapshot["routes"][route]["candidates"]
    return {
        k: {f: v for f, v in row.items() if f != "first_choice_share"} for k, row in rows.items()
    }


@pytest.fixture
async def switch(redis_url: str) -> AsyncIterator[Switch]:
    forwarder = Switch(redis_url)
    await forwarder.on()
    yield forwarder
    with contextlib.suppress(AssertionError):
        await forwarder.off()


@pytest.fixture
async def learners(
    redis_url: str, redis_prefix: str, clock: ManualClock
) -> AsyncIterator[Callable[..., SharedLearner]]:
    """learners(url=redis_url) → a SharedLearner on a SharedState (a connection) of its own."""
    made: list[SharedState] = []

    def make(url: str = redis_url, config: LearningConfig = CONFIG) -> SharedLearner:
        state = SharedState(RedisConfig(url=url, key_prefix=redis_prefix), clock=clock,
                            stats=Stats(clock=clock))  # fmt: skip
        made.append(state)
        return SharedLearner(state, config, [PAIR, OTHER])

    yield make
    for state in made:
        await state.close()


async def test_concurrent_pushes_on_two_connections_lose_no_update(redis_client, redis_prefix):
    """GW-19: each push is one atomic script: interleaved pushes add up like one learner."""
    reference = Learner(CONFIG, [PAIR])
    twins = [RedisLearning(redis_client(), prefix=redis_prefix, window=200, recent=50)
             for _ in range(2)]  # fmt: skip
    decay, forget = reference._decay, reference._forget

    async def pushes(twin: RedisLearning) -> None:
        for _ in range(40):
            batch = Batch(decay, forget)
            for _ in range(5):
                batch.add("pair", outcome(A, latency=0.5))
                reference.observe(outcome(A, latency=0.5))
            await twin.push(batch, ["pair"], {}, [])

    await asyncio.gather(*(pushes(t) for t in twins))
    rows = (await twins[0].push(Batch(decay, forget), ["pair"], {}, [])).arms["pair"]
    expected = reference._routes["pair"].arms[0]
    assert rows["a/m"].calls == 400 and rows["a/m"].errors == 0
    assert rows["a/m"].ok == pytest.approx(expected.ok, rel=1e-9)  # 400 calls of discounting
    assert rows["a/m"].latency == pytest.approx(0.5) and rows["a/m"].cost == pytest.approx(0.002)
    assert "b/m" not in rows


async def test_replicas_pushing_in_turn_build_the_statistics_of_one_learner(learners):
    """GW-12/19: the half-life counts the route's calls on every replica, so discounting is
    that of one learner seeing the batches in the order Redis took them."""
    one, two = learners(), learners()
    reference = Learner(CONFIG, [PAIR, OTHER])
    feed([one, reference], *[outcome(A, ok=i % 3 > 0, latency=0.2 + i / 50) for i in range(12)])
    await one.flush()
    feed([two, reference], *[outcome(B, latency=0.4)] * 6)  # a is only forgotten meanwhile
    await two.flush()
    feed([one, reference], outcome(B, latency=0.3), *[outcome(A, ok=False)] * 6)
    feed([one, reference], outcome(A, route="other"))
    await one.flush()
    expected = reference.snapshot()
    for learner in (one, two):
        view = await learner.view()
        assert candidates(view) == candidates(expected)
        assert candidates(view, "other") == candidates(expected, "other")
        assert view["routes"]["pair"]["preference"] == ["b/m", "a/m"]


async def test_a_replica_that_served_nothing_prefers_what_the_others_learnt(learners):
    """GW-12/19: B's own plan follows A's outcomes after B's next flush, no traffic through B."""
    a, b = learners(), learners()
    feed([a], *[outcome(A, ok=False), outcome(B)] * 10)
    assert a.order("pair", (A, B)) == (B, A)
    assert b.order("pair", (A, B)) == (A, B), "before any flush, B knows nothing"
    await a.flush()
    await b.flush()
    assert b.order("pair", (A, B)) == (B, A)
    assert b.snapshot()["routes"]["pair"]["candidates"]["a/m"]["errors"] == 10


async def test_evolution_is_the_same_from_every_replica(learners):
    """GW-12/19: decisions, first-choice shares and recent outcomes are every replica's."""
    a, b = learners(), learners()
    for _ in range(3):
        a.order("pair", (A, B))
    b.order("pair", (A, B))
    feed([a], outcome(A, latency=0.25))
    feed([b], outcome(B, ok=False))
    await b.flush()
    view_a, view_b = await a.view(), await b.view()
    assert view_a == view_b
    route = view_a["routes"]["pair"]
    assert route["decisions"] == 4 and route["candidates"]["a/m"]["first_choice_share"] == 1.0
    assert [(o["target"], o["ok"]) for o in view_a["recent"]] == [("a/m", True), ("b/m", False)]
    assert view_a["recent"][0]["latency_ms"] == 250.0


async def test_a_reset_through_one_replica_resets_every_replica(learners):
    """GW-12/19: POST /evolution/reset clears Redis; the others follow at their next flush."""
    a, b = learners(), learners()
    feed([a], *[outcome(A, ok=False), outcome(B)] * 10, outcome(A, route="other"))
    await a.flush()
    await b.flush()
    assert b.order("pair", (A, B)) == (B, A)

    previous = await b.forget("pair")
    assert previous["routes"]["pair"]["candidates"]["a/m"]["errors"] == 10
    view = await a.view()
    assert view["routes"]["pair"]["candidates"]["a/m"]["calls"] == 0
    assert view["routes"]["pair"]["decisions"] == 0
    assert view["routes"]["other"]["candidates"]["a/m"]["calls"] == 1, "only the route asked"
    assert a.order("pair", (A, B)) == (A, B), "A's own view followed at its flush"

    await a.forget()
    view = await b.view()
    assert view["recent"] == [] and view["routes"]["other"]["candidates"]["a/m"]["calls"] == 0


async def test_while_redis_is_down_a_replica_learns_alone_then_hands_it_over(
    learners, switch, clock
):
    """GW-19 redis.on_error local: the view goes on learning from this process's outcomes;
    when Redis answers again what was learnt meanwhile is pushed, exactly once."""
    cut, other = learners(switch.url), learners()
    reference = Learner(CONFIG, [PAIR, OTHER])
    feed([cut, reference], *[outcome(A), outcome(B)] * 5)
    await cut.flush()

    await switch.off()
    feed([cut, reference], *[outcome(A, ok=False), outcome(B)] * 10)
    await cut.flush()  # fails: kept
    assert not cut.shared.ok and cut.shared.health()["policy"] == "local"
    assert cut.order("pair", (A, B)) == (B, A), "the local view learnt from the outage"
    local = await cut.view()  # not even tried before retry_seconds: this process's view
    assert candidates(local) == candidates(reference.snapshot())
    feed([cut, reference], outcome(A, ok=False))
    clock.advance(1)
    await cut.flush()  # tried once more, still down: composed with the first
    assert (await other.view())["routes"]["pair"]["candidates"]["a/m"]["errors"] == 0

    await switch.on()
    clock.advance(1)
    await cut.flush()
    assert cut.shared.ok
    await cut.flush()  # nothing owed any more: pushing again changes nothing
    view = await other.view()
    assert candidates(view) == candidates(reference.snapshot())
    assert view["routes"]["pair"]["candidates"]["a/m"]["errors"] == 11
    assert other.order("pair", (A, B)) == (B, A)


def test_with_redis_unreachable_the_server_learns_in_process(serve, upstream, upstream2):
    """GW-19 on_error local: /evolution shows what this process learnt; its reset works."""
    chain = [{"name": "default", "model": {"provider": "primary", "model": "m1"},
              "fallbacks": [{"provider": "secondary", "model": "m2"}]}]  # fmt: skip
    server = serve(make_config(
        {"primary": upstream, "secondary": upstream2}, routes=chain,
        learning={"enabled": True, "exploration": 0, "latency_weight": 0},
        limits={"breaker": {"failures": 1000}}, probes={"interval_seconds": 0},
        redis={"url": f"redis://127.0.0.1:{closed_port()}/15"},
    ))  # fmt: skip
    assert isinstance(server.app.gateway.gateway.learner, SharedLearner)
    upstream.script(*[Reply(status=500)] * 10)
    body = {"model": "auto", "messages": [{"role": "user", "content": "hello"}]}
    for _ in range(10):
        assert httpx.post(f"{server.url}/v1/chat/completions", json=body).status_code == 200
    assert len(upstream.requests) < 10, "the learner moved the failing candidate back"
    route = httpx.get(f"{server.url}/evolution").json()["routes"]["default"]
    assert route["preference"] == ["secondary/m2", "primary/m1"]
    assert route["candidates"]["secondary/m2"]["calls"] == 10 and route["decisions"] == 10
    assert httpx.get(f"{server.url}/health").json()["shared_state"]["ok"] is False
    token = {"x-nerve-admin-token": server.app.admin.auth.issue().token}
    assert httpx.post(f"{server.url}/evolution/reset", headers=token).status_code == 200
    route = httpx.get(f"{server.url}/evolution").json()["routes"]["default"]
    assert route["preference"] == ["primary/m1", "secondary/m2"] and route["decisions"] == 0
