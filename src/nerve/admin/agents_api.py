"""The admin panel's Agents page: the registry (SPEC PR-4) and its recent route failures.

    GET /admin/api/agents   {agents: [{agent_name, endpoint, capabilities, created_at,
                             updated_at, failures, last_failure}], failures: [...], note}

The registry is `host.agents` (stored in `storage.url`, shared by replicas). A route that fails
is logged by the registry ("agent X failed task Y: ...", logger nerve.agents), mirrored into the
shared event log: those lines are the route results on record. Successful routes are not
logged anywhere, so no agent has a "last success" here; the note says so.
"""

from __future__ import annotations

import re
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from nerve.admin.http import Handler
from nerve.admin.panel import AdminPanel

__all__ = ["agents_routes"]

# registry.py: "agent %s failed task %s: %s"
_FAILED = re.compile(r"^agent (\S+) failed task (\S+): (.*)$", re.S)
NOTE = "Route results on record are failures only (nerve logs no successful route)."


def _failure(event: dict[str, Any]) -> dict[str, Any] | None:
    found = _FAILED.match(str(event.get("message", "")))
    if event.get("logger") != "nerve.agents" or found is None:
        return None
    agent, task, error = found.groups()
    return {"seq": event["seq"], "ts": event["ts"], "agent": agent, "task": task, "error": error}


def agents_routes(panel: AdminPanel) -> list[tuple[str, Handler, list[str]]]:
    host: Any = panel.host

    async def listing(request: Request) -> Response:
        agents: list[dict[str, Any]] = await host.agents.list()
        logged = await panel.events.recent(kinds={"WARNING"}, q="failed task", limit=500)
        failures = [f for e in logged if (f := _failure(e)) is not None][::-1]  # newest first
        for agent in agents:
            mine = [f for f in failures if f["agent"] == agent["agent_name"]]
            agent["failures"] = len(mine)
            agent["last_failure"] = mine[0] if mine else None
        return JSONResponse({"agents": agents, "failures": failures[:50], "note": NOTE})

    return [("/admin/api/agents", listing, ["GET"])]
