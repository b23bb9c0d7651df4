"""Routing: which route a chat request goes to (SPEC GW-3, GW-4, GW-16).

The seam is `Router.decide(messages) -> Decision`. The cascade (cascade.py) asks, in order: the
regex rules (rules.py), the TF-IDF classifier over each route's examples (semantic.py), the
conversation's earlier messages when the latest is a bare follow-up, and finally the route named
`default`. To add a layer (say a learnt one, GW-12), give it a method returning evidence or None
and call it from `Router._classify` at its place in the order; `Decision.layer` names it.
"""

from nerve.gateway.router.cascade import DEFAULT_ROUTE, Decision, Router

__all__ = ["DEFAULT_ROUTE", "Decision", "Router"]
