"""The learning router shared by replicas through Redis (SPEC GW-12, GW-19): one learner for all.

A SharedLearner *is* a Learner: `order()` and `observe()` stay in-process and as cheap (no round
trip per request). Its arms are a view: the statistics last pulled from Redis plus this
process's outcomes since, which `observe` also adds to a Batch (batch.py). Each stats
flush (every second, resilience/shared.py) pushes the batch, this replica's recent decisions and
outcomes in one transaction and pulls every route's statistics back (redis.py), so a
replica that served nothing still learns within a second what the others saw.

GET /evolution (`view`) pushes first, then shows what Redis holds: the same from every replica.
POST /evolution/reset (`forget`) clears it in Redis for all; the others' views follow at their
next flush. The exploration budget stays per process (each replica's last WINDOW decisions), so
the share of explorations among all replicas' decisions is within the budget as well.

While Redis is unavailable (`redis.on_error`, either policy), the in-process view goes on
learning from this process's outcomes and the unpushed batches are composed into one, pushed
when Redis is back; /evolution then shows this process's view, and a reset is only local.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Iterable
from typing import Any

import orjson

from nerve.config import LearningConfig, RouteConfig
from nerve.gateway.learning.bandit import Arm
from nerve.gateway.learning.batch import Batch
from nerve.gateway.learning.learner import RECENT, WINDOW, Learner
from nerve.gateway.learning.redis import ArmRow, Pulled, RedisLearning
from nerve.gateway.outcome import Outcome
from nerve.gateway.resilience.shared import MISS, SharedState

__all__ = ["SharedLearner"]


def _load(arm: Arm, row: ArmRow | None) -> Arm:
    if row is None:  # never called (or reset)
        arm.ok = arm.fail = 0.0
        arm.calls = arm.errors = 0
        arm.latency = arm.cost = None
    else:
        arm.ok, arm.fail, arm.calls, arm.errors = row.ok, row.fail, row.calls, row.errors
        arm.latency, arm.cost = row.latency, row.cost
    return arm


class SharedLearner(Learner):
    def __init__(
        self,
        shared: SharedState,
        config: LearningConfig,
        routes: Iterable[RouteConfig] = (),
        *,
        rng: random.Random | None = None,
    ) -> None:
        self.shared = shared
        self.batch = Batch(1.0, 1.0)  # its factors are set by configure()
        super().__init__(config, routes, rng=rng)
        self.redis = RedisLearning(shared.redis, prefix=shared.prefix, window=WINDOW,
                                   recent=RECENT)  # fmt: skip
        self._observed = self._observed_sent = 0
        self._lock = asyncio.Lock()  # one push at a time: batches reach Redis in order
        shared.on_flush(self.flush)

    def configure(self, config: LearningConfig, routes: Iterable[RouteConfig]) -> None:
        super().configure(config, routes)
        self.batch.decay, self.batch.forget = self._decay, self._forget

    def observe(self, outcome: Outcome) -> None:
        super().observe(outcome)
        self._observed += 1
        st = self._routes.get(outcome.route)
        if st is not None and outcome.target in st.by_key:
            self.batch.add(outcome.route, outcome)

    async def flush(self) -> None:
        await self._push(read=False)

    async def _push(self, *, read: bool) -> Pulled | None:
        """Push what is owed and adopt what Redis holds; None when Redis was not reached."""
        async with self._lock:
            batch, self.batch = self.batch, Batch(self._decay, self._forget)
            routes = dict(self._routes)
            noted = {name: st.noted for name, st in routes.items()}
            decisions = {name: st.unsent() for name, st in routes.items()}
            observed, fresh = self._observed, min(self._observed - self._observed_sent, RECENT)
            recent = [orjson.dumps(o.to_dict()).decode()
                      for o in list(self.recent)[-fresh:]] if fresh > 0 else []  # fmt: skip
            pulled = await self.shared.run(
                lambda: self.redis.push(batch, routes, decisions, recent, read=read)
            )
            if pulled is MISS:
                self.batch = batch.then(self.batch)  # owed still, before what came meanwhile
                return None
            for name, st in routes.items():
                st.sent = noted[name]
            self._observed_sent = observed
            self._adopt(pulled)
            return pulled

    def _adopt(self, pulled: Pulled) -> None:
        """The local view := Redis's statistics + the outcomes observed during the push."""
        for name, st in self._routes.items():
            rows = pulled.arms.get(name)
            if rows is None:  # a route a reload added during the push: next time
                continue
            pending = self.batch.routes.get(name)
            for arm in st.arms:
                _load(arm, rows.get(arm.key))
                if pending is not None:
                    pending.apply(arm)
            st.dirty = True

    async def view(self) -> dict[str, Any]:
        pulled = await self._push(read=True)
        if pulled is None:
            return self.snapshot()
        routes = {}
        for name, st in self._routes.items():
            rows = pulled.arms.get(name, {})
            arms = [_load(Arm(t), rows.get(str(t))) for t in st.targets]
            decided = pulled.decisions.get(name, [])
            firsts = Counter(d.removeprefix("*") for d in decided)
            explored = sum(d.startswith("*") for d in decided)
            routes[name] = self._describe(
                st, arms, [firsts[a.key] for a in arms], len(decided), explored
            )
        recent = [orjson.loads(o) for o in reversed(pulled.recent)]
        return self._snapshot(routes, recent)

    async def forget(self, route: str | None = None) -> dict[str, Any]:
        self.check(route)
        previous = await self.view()
        names = list(self._routes) if route is None else [route]
        async with self._lock:
            await self.shared.run(lambda: self.redis.reset(names, everything=route is None))
            self.reset(route)
            self.batch.drop(route)
            self._observed_sent = self._observed
        return previous
