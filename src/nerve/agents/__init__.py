"""The agent-to-agent registry (SPEC PR-4): register agents, find them by capability, route tasks.

Seam: `AgentStore` (store.py), one protocol with a SQLite and a PostgreSQL backend in the
memory database. `AgentRegistry` is the Python API; `agents_router` its REST surface; the
pipeline gets `AgentRegistry.delegate` injected and falls back to its local handler when the
agent fails. To reach agents beyond loopback, list their hosts in `agents.allowed_hosts`.
"""

from nerve.agents.guard import Guard, Refused
from nerve.agents.model import Agent
from nerve.agents.registry import AgentRegistry
from nerve.agents.routes import agents_router
from nerve.agents.store import AgentStore, agent_store_from_url

__all__ = [
    "Agent",
    "AgentRegistry",
    "AgentStore",
    "Guard",
    "Refused",
    "agent_store_from_url",
    "agents_router",
]
