"""The learning router (SPEC GW-12): candidates reordered by what their calls showed.

Face: `Learner` (learner.py), a `Gateway.observers` callback that `Gateway.plan` asks for a
route's order. Inside: `bandit` (one arm per route and target, Thompson sampling), `batch` (the
outcomes a replica buffers between flushes), `redis` (their shared statistics), `shared`
(`SharedLearner`: the same Learner as a view of what every replica added, with `redis.url`).
"""

from nerve.gateway.learning.learner import RECENT, WINDOW, Learner

__all__ = ["RECENT", "WINDOW", "Learner"]
