"""The admin panel's Agents page: the registry (SPEC PR-4) and its last route results.

    GET /admin/api/agents   {agents: [{agent_name, endpoint, capabilities, created_at,
                             updated_at, successes, failures, recent, last_result,
                             last_success, last_failure}], results: [...], failures: [...], note}

The registry is `host.agents` (stored in `storage.url`, shared by replicas). Its routes are on
record in the shared event log: a success as an AGENT_ROUTE record (agent, task, latency_ms;
registry.py logs it at INFO, records.py stores it), a failure as its WARNING line ("agent X
failed task Y: ...", logger nerve.agents, mirrored). A result is {seq, ts, agent, task, ok,
latency_ms (successes), error (failures)}; `results` are the newest 50 of both, newest first,
each agent's `recent` its newest 5; its counts are over the newest 500 records of each kind.
"""

from __future__ import annotations

import re
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from nerve.admin.http import Handler
from nerve.admin.panel import AdminPanel
from nerve.admin.records import install

__all__ = ["agents_routes"]

# registry.py: "agent %s failed task %s: %s"
_FAILED = re.compile(r"^agent (\S+) failed task (\S+): (.*)$", re.S)
SCANNED = 500  # route records of each kind read
SHOWN = 50
PER_AGENT = 5  # an agent's last results, newest first
NOTE = ("Successful routes are recorded while the server logs at INFO (the default); "
        "a failed route always.")  # fmt: skip


def _failure(event: dict[str, Any]) -> dict[str, Any] | None:
    found = _FAILED.match(str(event.get("message", "")))
    if event.get("logger") != "nerve.agents" or found is None:
        return None
    agent, task, error = found.groups()
    return {"seq": event["seq"], "ts": event["ts"], "agent": agent, "task": task, "ok": False,
            "latency_ms": None, "error": error}  # fmt: skip


def _success(event: dict[str, Any]) -> dict[str, Any]:
    return {"seq": event["seq"], "ts": event["ts"], "agent": event.get("agent"),
            "task": event.get("task"), "ok": True, "latency_ms": event.get("latency_ms"),
            "error": None}  # fmt: skip


def agents_routes(panel: AdminPanel) -> list[tuple[str, Handler, list[str]]]:
    host: Any = panel.host
    install()

    async def listing(request: Request) -> Response:
        agents: list[dict[str, Any]] = await host.agents.list()
        logged = await panel.events.recent(kinds={"WARNING"}, q="failed task", limit=SCANNED)
        routed = await panel.events.recent(kinds={"AGENT_ROUTE"}, limit=SCANNED)
        failures = [f for e in logged if (f := _failure(e)) is not None]
        results = sorted(failures + [_success(e) for e in routed], key=lambda r: -int(r["seq"]))
        for agent in agents:
            mine = [r for r in results if r["agent"] == agent["agent_name"]]
            ok = [r for r in mine if r["ok"]]
            failed = [r for r in mine if not r["ok"]]
            agent.update(successes=len(ok), failures=len(failed), recent=mine[:PER_AGENT],
                         last_result=mine[0] if mine else None,
                         last_success=ok[0] if ok else None,
                         last_failure=failed[0] if failed else None)  # fmt: skip
        failed_only = [r for r in results if not r["ok"]]
        return JSONResponse({"agents": agents, "results": results[:SHOWN],
                             "failures": failed_only[:SHOWN], "note": NOTE})  # fmt: skip

    return [("/admin/api/agents", listing, ["GET"])]
