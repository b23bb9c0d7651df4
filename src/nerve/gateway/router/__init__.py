"""Routing: which route a chat request goes to, and in which order its models are tried
(SPEC GW-3, GW-4, GW-5, GW-16, TP-3).

The seam is `Router.decide(messages, private=...) -> Decision`. The cascade (cascade.py) asks, in
order: a private route, when the header asks for one or the request carries personal data
(understand.py, pii.py); the regex rules (rules.py); the `when` layers, by language and by task
(understand.py, tasks.py); the TF-IDF classifier over each route's examples (semantic.py); the
conversation's earlier messages when the latest is a bare follow-up; and finally the route named
`default`. To add a layer, give it a method returning `Evidence` or None, call it from
`Router._classify` at its place in the order and add its name to `LAYERS`; `Decision.layer`
names it. `Rotation` (targets.py) lets a route's equal candidates take turns.
"""

from nerve.gateway.router.cascade import DEFAULT_ROUTE, LAYERS, Decision, Router
from nerve.gateway.router.targets import Rotation

__all__ = ["DEFAULT_ROUTE", "LAYERS", "Decision", "Rotation", "Router"]
