"""The gateway (SPEC GW-*): an OpenAI-compatible front for many providers, and nerve's Python API
for reaching a model.

Face:
    GatewayState(config)            what a running gateway holds; `open`, `reload`, `close`
    gateway_routes(state)           its HTTP routes (/v1/*, /health, /stats, /metrics, ...)
    state.gateway: Gateway          `plan`, `complete`, `streaming`, `ask` (core.py)
    Plan, Served, Streaming         what one call is made of (plan.py)

Inside, by concern: `router/` chooses a route (rules → semantic → learnt → default),
`learning/` reorders its candidates by what their calls showed, `providers/` speak each
upstream's wire protocol behind one seam (`Provider`, `Completion`, `Stream`), `resilience/`
holds breakers, cooldowns and rate limits (in process, or shared through Redis), `dialects/`
translate the agents' protocols (Anthropic Messages, OpenAI Responses, embeddings), `guard/`
judges the tool calls a model returns, and endpoint.py, app.py and the *_routes modules are
HTTP. Nothing here imports the server, the MCP layer or a channel.
"""

from nerve.gateway.app import GatewayState, gateway_routes
from nerve.gateway.core import Gateway
from nerve.gateway.plan import Plan, Served, Streaming

__all__ = ["Gateway", "GatewayState", "Plan", "Served", "Streaming", "gateway_routes"]
