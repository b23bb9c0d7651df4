"""Equal candidates take turns (SPEC GW-5): round-robin within a route's tiers.

A route's `tiers` (nerve.config_routes) group its candidates: a tag target's models of one
priority form one tier, every other target is a tier of its own. Each plan of a route advances
that route's turn by one, and each tier is rotated by the turn: with models a, b of priority 1
and c of priority 2, plans go a b c, b a c, a b c... The others stay behind as fallbacks, so a
lower-priority model serves only when every higher one was skipped or failed.

The turn is per process and starts at 0 (config order), which makes it deterministic to test;
replicas rotate independently, which spreads load just as well. A plan the learning router
reorders (learning.enabled) keeps the learnt order instead.
"""

from __future__ import annotations

from collections.abc import Sequence

from nerve.config import RouteConfig, Target

__all__ = ["Rotation"]


class Rotation:
    def __init__(self, routes: Sequence[RouteConfig]) -> None:
        # Only routes with a tier of two or more ever rotate.
        self._tiers = {r.name: r.tiers for r in routes if any(len(t) > 1 for t in r.tiers)}
        self._turns = dict.fromkeys(self._tiers, 0)

    def turn(self, route: str) -> tuple[Target, ...] | None:
        """This plan's order of `route`'s candidates, or None when the route never rotates."""
        tiers = self._tiers.get(route)
        if tiers is None:
            return None
        turn = self._turns[route]
        self._turns[route] = turn + 1
        order: list[Target] = []
        for tier in tiers:
            k = turn % len(tier)
            order += tier[k:] + tier[:k]
        return tuple(order)
