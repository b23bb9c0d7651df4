"""The learning router on a simulated mix (SPEC GW-12). Run: python bench/learning.py

Three candidates on one route, in config order a, b, c: a answers 99% of calls in 0.8 s, b 99% in
1.0 s, c 97% in 1.4 s at 3/4 of the price (by the default weights a scores best, then b, then c).
At request T a degrades (50% of its calls fail, its latency triples); at request R it recovers.
Each request asks `Learner.order` for the candidates and walks them like the gateway (the first
success ends the walk; each call is an Outcome fed to `Learner.observe`); requests arrive at
--rps simulated requests per second. No network, no sleeping: the clock is the request count.

Reported per configuration, median over seeds: the share of requests whose first call went to a
in the 500 before T, from T+500 to R, and from R+500 to the end; requests after T until a stops
being the preferred candidate ("switch"); the time to react (requests after T until the next 20
requests put at most 20% of their first calls on a, also in simulated seconds); calls that failed
on a between T and R; the share of decisions led by a non-preferred candidate (exploration); the
median cost of `order()`. A table times `Gateway.plan` for a named 3-candidate route, with the
in-process learner and (when the redis package is installed) the SharedLearner, whose order()
never reaches Redis. With a Redis at --redis, the last table times the shared statistics:
`observe()` in and out of process, and one flush (push the batch, pull every route) by the
outcomes in its batch, with 3 routes of 3 candidates.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import random
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from nerve.config import LearningConfig, RedisConfig, RouteConfig, Target, parse_config
from nerve.gateway.core import Gateway
from nerve.gateway.learning.learner import Learner
from nerve.gateway.outcome import Outcome
from nerve.gateway.resilience import Breakers, Cooldowns
from nerve.gateway.stats import Stats, Usage

ROUTE = RouteConfig(
    name="default",
    model=Target(provider="a", model="m"),
    fallbacks=[Target(provider="b", model="m"), Target(provider="c", model="m")],
)
USAGE = Usage(prompt_tokens=500, completion_tokens=200, total_tokens=700)
WINDOW = 20  # requests over which "moved away" is judged


@dataclass
class Candidate:
    success: float
    latency_s: float
    cost_usd: float


def candidates() -> dict[str, Candidate]:
    return {
        "a/m": Candidate(0.99, 0.8, 0.002),
        "b/m": Candidate(0.99, 1.0, 0.002),
        "c/m": Candidate(0.97, 1.4, 0.0015),
    }


def simulate(config: LearningConfig, seed: int, n: int, t: int, r: int) -> dict[str, float]:
    rng = random.Random(seed)
    learner = Learner(config, [ROUTE], rng=random.Random(seed + 1))
    pool, targets = candidates(), tuple(ROUTE.targets)
    first_on_a: list[bool] = []
    explored = failed_after = 0
    switch = float("nan")
    order_ns: list[int] = []
    for request in range(n):
        if request in (t, r):
            pool["a/m"] = Candidate(0.5, 2.4, 0.002) if request == t else candidates()["a/m"]
        start = time.perf_counter_ns()
        plan = learner.order(ROUTE.name, targets)
        order_ns.append(time.perf_counter_ns() - start)
        if config.enabled:
            preferred = learner.snapshot()["routes"]["default"]["preference"][0]
            explored += str(plan[0]) != preferred
            if request >= t and preferred != "a/m" and switch != switch:
                switch = request - t
        first_on_a.append(str(plan[0]) == "a/m")
        tried: list[tuple[str, str]] = []
        for index, target in enumerate(plan):
            key, c = str(target), pool[str(target)]
            ok = rng.random() < c.success
            latency = c.latency_s * rng.lognormvariate(0, 0.2)
            learner.observe(
                Outcome(ROUTE.name, key, ok, latency if ok else latency / 2,
                        USAGE if ok else None, c.cost_usd if ok else 0.0, index > 0,
                        None if ok else "UpstreamStatus: 500", tuple(tried), "default", 0.0)
            )  # fmt: skip
            if ok:
                break
            failed_after += key == "a/m" and t <= request < r
            tried.append((key, "500"))
    react = next(
        (
            k
            for k in range(r - t - WINDOW)
            if sum(first_on_a[t + k : t + k + WINDOW]) <= 0.2 * WINDOW
        ),
        float("nan"),
    )
    return {
        "before": statistics.fmean(first_on_a[max(0, t - 500) : t]),
        "after": statistics.fmean(first_on_a[t + 500 : r]),
        "recovered": statistics.fmean(first_on_a[r + 500 :]),
        "switch": switch,
        "react": react,
        "failed": failed_after,
        "explored": explored / n,
        "order_us": statistics.median(order_ns) / 1000,
    }


def mix_table(seeds: int, n: int, t: int, r: int, rps: float) -> None:
    rows: list[tuple[str, LearningConfig]] = [
        ("learning off", LearningConfig()),
        ("on (defaults)", LearningConfig(enabled=True)),
        ("on, exploration 0", LearningConfig(enabled=True, exploration=0)),
        ("on, exploration 0.1", LearningConfig(enabled=True, exploration=0.1)),
        ("on, half-life 20", LearningConfig(enabled=True, half_life_calls=20)),
        ("on, half-life 200", LearningConfig(enabled=True, half_life_calls=200)),
    ]
    print(f"a degrades at request T={t} (success 0.99 -> 0.5, latency x3) and recovers at "
          f"R={r}, of {n}; {rps:g} req/s; median of {seeds} seeds")  # fmt: skip
    head = ("config", "a before", "a during", "a after R", "switch", "react req", "react s",
            "failed a", "explore", "order µs")  # fmt: skip
    print(f"{head[0]:<20}" + "".join(f"{h:>10}" for h in head[1:]))
    for name, config in rows:
        runs = [simulate(config, seed, n, t, r) for seed in range(seeds)]

        def med(field: str, runs: list[dict[str, float]] = runs) -> float:
            return statistics.median(r[field] for r in runs)

        print(
            f"{name:<20}{med('before'):>10.1%}{med('after'):>10.1%}{med('recovered'):>10.1%}"
            f"{med('switch'):>10.0f}"
            f"{med('react'):>10.0f}"
            f"{med('react') / rps:>10.1f}{med('failed'):>10.0f}{med('explored'):>10.1%}"
            f"{med('order_us'):>10.2f}"
        )


class _Provider:
    def __init__(self, name: str) -> None:
        self.name, self.missing_key = name, False


def shared_learner(url: str, prefix: str, routes: list[RouteConfig]) -> Any:
    """A SharedLearner on its own SharedState (connects on first use), or None without redis."""
    try:
        from nerve.gateway.learning.shared import SharedLearner
        from nerve.gateway.resilience.shared import SharedState
    except ImportError:
        return None
    shared = SharedState(RedisConfig(url=url, key_prefix=prefix))
    return SharedLearner(shared, LearningConfig(enabled=True), routes)


def plan_table(decisions: int, url: str) -> None:
    print(f"\nGateway.plan(model='default'), 3 candidates, {decisions} decisions, µs")
    print(f"{'learning':<10}{'median':>10}{'p99':>10}")
    for name in ("off", "on", "on, shared"):
        data: dict[str, Any] = {
            "providers": [{"name": p, "base_url": "http://127.0.0.1:9/v1"} for p in "abc"],
            "routes": [ROUTE.model_dump()],
            "learning": {"enabled": name != "off"},
        }
        config = parse_config(data, environ={})
        learner = shared_learner(url, "bench:", [ROUTE]) if name == "on, shared" else None
        if name == "on, shared" and learner is None:
            continue
        gateway = Gateway(
            config,
            {p: _Provider(p) for p in "abc"},  # type: ignore[misc]  # plan() never calls them
            breakers=Breakers.from_config(config.limits.breaker),
            cooldowns=Cooldowns(),
            stats=Stats(),
            learner=learner,
        )
        body = {"model": "default", "messages": [{"role": "user", "content": "hi"}]}
        for key in ("a/m", "b/m", "c/m"):  # every candidate rated, so the budget is in play
            for _ in range(10):
                gateway.learner.observe(
                    Outcome("default", key, True, 1.0, USAGE, 0.001, False, None, (), None, 0.0)
                )
        gc.collect()
        ns = []
        for _ in range(decisions):
            start = time.perf_counter_ns()
            gateway.plan(body)
            ns.append(time.perf_counter_ns() - start)
        ns.sort()
        print(f"{name:<10}{ns[len(ns) // 2] / 1000:>10.2f}{ns[int(len(ns) * 0.99)] / 1000:>10.2f}")


async def redis_table(url: str, runs: int) -> None:
    routes = [ROUTE.model_copy(update={"name": f"r{i}"}) for i in range(3)]
    learner = shared_learner(url, f"bench:{time.time_ns()}:", routes)
    if learner is None:
        print("\n(no redis package: the shared statistics are not timed)")
        return
    try:
        await learner.shared.redis.ping()
    except Exception as e:
        print(f"\n(Redis at {url} is not reachable, {type(e).__name__}: the shared statistics are "
              "not timed)")  # fmt: skip
        return
    local = Learner(LearningConfig(enabled=True), routes)
    outcome = Outcome("r0", "a/m", True, 1.0, USAGE, 0.001, False, None, (), None, 0.0)
    print(f"\nShared statistics in Redis at {url}, 3 routes x 3 candidates, median of {runs}")
    for name, lrn in (("observe(), in process", local), ("observe(), shared", learner)):
        ns = []
        for _ in range(20_000):
            start = time.perf_counter_ns()
            lrn.observe(outcome)
            ns.append(time.perf_counter_ns() - start)
        print(f"{name:<34}{statistics.median(ns) / 1000:>10.2f} µs")
    await learner.flush()
    for batch in (0, 10, 100, 1000):
        ns = []
        for _ in range(runs):
            for i in range(batch):
                target = "abc"[i % 3]
                learner.observe(Outcome(f"r{i % 3}", f"{target}/m", i % 7 > 0, 1.0, USAGE,
                                        0.001, False, None, (), None, 0.0))  # fmt: skip
                learner.order(f"r{i % 3}", tuple(ROUTE.targets))
            start = time.perf_counter_ns()
            await learner.flush()
            ns.append(time.perf_counter_ns() - start)
        print(f"{f'flush of {batch} outcomes':<34}{statistics.median(ns) / 1000:>10.1f} µs")
    start = time.perf_counter_ns()
    for _ in range(runs):
        await learner.view()
    print(
        f"{'view() (GET /evolution)':<34}{(time.perf_counter_ns() - start) / runs / 1000:>10.1f} µs"
    )
    await learner.forget()
    await learner.shared.close()


def main(argv: Sequence[str] = sys.argv[1:]) -> None:
    parser = argparse.ArgumentParser(
        description="Learning router: reaction to a degrading candidate, exploration, cost."
    )
    parser.add_argument("--seeds", type=int, default=7, help="simulations per configuration")
    parser.add_argument("--requests", type=int, default=6000, help="requests per simulation")
    parser.add_argument("--degrade-at", type=int, default=2000, help="request T: a degrades")
    parser.add_argument("--recover-at", type=int, default=4000, help="request R: a recovers")
    parser.add_argument("--rps", type=float, default=10.0, help="simulated requests per second")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/15", help="for the last table")
    args = parser.parse_args(argv)
    mix_table(args.seeds, args.requests, args.degrade_at, args.recover_at, args.rps)
    plan_table(20_000, args.redis)
    asyncio.run(redis_table(args.redis, 200))


if __name__ == "__main__":
    main()
