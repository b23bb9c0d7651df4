"""The admin panel's Safety page: try a command on the running engine, and recent verdicts
(SPEC SF-4), both from the shared event log so every replica's panel shows the same list.

    POST /admin/api/safety/check      {kind: shell|sql|text|action, content} → {kind, verdict}
    GET  /admin/api/safety/verdicts   ?allowed=true|false&kind=shell|...|tool_call&limit=100
                                      → {verdicts: [{seq, ts, source, kind, allowed, risk_level,
                                         reason, subject, ...}], sources: [...]}

What is on record, and so what the list shows: every check tried here (event SAFETY_CHECK);
every verdict a server with the panel gives, allowed or not, as a VERDICT record
(safety/record.py, stored by records.py) with its `source`: "pipeline" (`/api/process`, MCP
`process` and `safe_execute`: kind "text", the start of the text as subject), "tools" (a tool's
own check before it runs: the assistant's commands, the intent tools), "api" (`POST
/api/safety/check`), "mcp" (the MCP `safety_check` tool) and "guard" (a tool call a model
returned that the gateway's guard let through); and the calls the guard blocked or flagged
(its "GUARD BLOCKED|FLAGGED" log lines, mirrored as WARNING; kind "tool_call", the tool's name
as subject). Records are logged at INFO: a server started with `--log-level warning` keeps
only the blocked and flagged calls and the checks tried here.
"""

from __future__ import annotations

import re
from typing import Any, cast, get_args

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from nerve.admin.http import Handler, read_json
from nerve.admin.panel import AdminPanel
from nerve.admin.records import install
from nerve.errors import RequestError
from nerve.safety.verdict import Kind

__all__ = ["safety_routes"]

KINDS: tuple[str, ...] = get_args(Kind)
MAX_CONTENT = 20_000  # a command or a statement, not a file
SHOWN = 500  # of the content, kept in the log: enough to tell which command it was
# traffic.py: "GUARD %s route=%s %s (%s risk): %s" (what, route, tool, risk, reason)
_GUARD = re.compile(r"^GUARD (BLOCKED|FLAGGED) route=(\S*) (\S+) \((\w+) risk\): (.*)$", re.S)
SOURCES = ["admin panel checks (SAFETY_CHECK)",
           "every verdict of the pipeline, tools, REST, MCP and the gateway guard (VERDICT)",
           "gateway guard: blocked and flagged tool calls"]  # fmt: skip
_KEPT = ("allowed", "risk_level", "reason", "blocked_by", "category")


def _guard_verdict(event: dict[str, Any]) -> dict[str, Any] | None:
    found = _GUARD.match(str(event.get("message", "")))
    if found is None:
        return None
    what, route, tool, risk, reason = found.groups()
    return {"seq": event["seq"], "ts": event["ts"], "source": "guard", "kind": "tool_call",
            "allowed": what == "FLAGGED", "flagged": what == "FLAGGED", "risk_level": risk,
            "reason": reason, "subject": tool, "route": route, "blocked_by": None,
            "category": None}  # fmt: skip


def _check_verdict(event: dict[str, Any]) -> dict[str, Any]:
    return {"seq": event["seq"], "ts": event["ts"], "source": "admin", "kind": event.get("check"),
            "subject": event.get("message", ""), "flagged": False,
            **{k: event.get(k) for k in _KEPT}}  # fmt: skip


def _recorded_verdict(event: dict[str, Any]) -> dict[str, Any]:
    """A VERDICT record (pipeline/process.py)."""
    return {"seq": event["seq"], "ts": event["ts"], "source": event.get("source", "pipeline"),
            "kind": event.get("check"), "subject": event.get("subject", ""), "flagged": False,
            "user_id": event.get("user_id"), "intent": event.get("intent"),
            **{k: event.get(k) for k in _KEPT}}  # fmt: skip


def _allowed_filter(request: Request) -> bool | None:
    value = request.query_params.get("allowed", "")
    if value not in ("", "true", "false"):
        raise RequestError("'allowed' is true or false (or absent: both)", param="allowed")
    return None if value == "" else value == "true"


def safety_routes(panel: AdminPanel) -> list[tuple[str, Handler, list[str]]]:
    host: Any = panel.host
    install()

    async def check(request: Request) -> Response:
        body = await read_json(request)
        kind, content = body.get("kind"), body.get("content")
        if kind not in KINDS:
            raise RequestError(f"'kind' is one of {', '.join(KINDS)}", param="kind")
        if not isinstance(content, str) or not content.strip():
            raise RequestError("'content' is the command or text to check", param="content")
        if len(content) > MAX_CONTENT:
            raise RequestError(f"'content' is at most {MAX_CONTENT} characters", param="content")
        verdict = await host.pipeline.safety.check(cast(Kind, kind), content)
        result: dict[str, Any] = verdict.to_dict()
        # `check`: the event's own `kind` is SAFETY_CHECK. `message` and `reason` are scrubbed
        # of configured secrets by the event log.
        await panel.events.record("SAFETY_CHECK", check=kind, message=content[:SHOWN],
                                  client=panel.client(request.scope), **result)  # fmt: skip
        return JSONResponse({"kind": kind, "verdict": result})

    async def verdicts(request: Request) -> Response:
        allowed, kind = _allowed_filter(request), request.query_params.get("kind") or None
        if kind is not None and kind not in (*KINDS, "tool_call"):
            raise RequestError(f"'kind' is one of {', '.join(KINDS)}, tool_call", param="kind")
        try:
            limit = min(1000, max(1, int(request.query_params.get("limit", "100"))))
        except ValueError:
            raise RequestError("'limit' is an integer", param="limit") from None
        checks = await panel.events.recent(kinds={"SAFETY_CHECK"}, limit=limit)
        guarded = await panel.events.recent(kinds={"WARNING"}, q="GUARD ", limit=limit)
        recorded = await panel.events.recent(kinds={"VERDICT"}, limit=limit)
        found = [_check_verdict(e) for e in checks] + [_recorded_verdict(e) for e in recorded]
        found += [v for e in guarded if (v := _guard_verdict(e)) is not None]
        found = [
            v for v in found
            if (allowed is None or v["allowed"] is allowed) and (kind is None or v["kind"] == kind)
        ]  # fmt: skip
        found.sort(key=lambda v: -int(v["seq"]))  # newest first
        return JSONResponse({"verdicts": found[:limit], "sources": SOURCES})

    return [
        ("/admin/api/safety/check", check, ["POST"]),
        ("/admin/api/safety/verdicts", verdicts, ["GET"]),
    ]
