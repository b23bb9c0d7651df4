"""`reminder`: one-shot reminders and cron jobs for this user, delivered where they were asked.

Backed by the scheduler the server puts in `ctx.services.scheduler` (nerve.assistant.jobs; this
module only calls its `add`/`list`/`cancel`, tools never import the assistant). A job is
delivered to the channel and chat of the conversation that created it: "notify" sends the text,
"execute" asks the assistant to carry it out then. Bad input comes back naming the field.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import Field

from nerve.tools.base import tool
from nerve.tools.result import ToolContext, ToolError

__all__ = ["reminder"]


def _parse_at(text: str) -> datetime:
    try:  # naive: the scheduler's timezone (assistant.jobs.timezone)
        return datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ToolError(f"at: {text!r} is not an ISO 8601 time, e.g. 2026-05-01T09:00") from None


@tool(
    description="Set, list or cancel reminders and recurring jobs for this user. A reminder "
    "fires once at `at` (ISO 8601 time) or repeatedly on `cron` (5-field cron schedule); "
    "mode notify sends the text back here, mode execute has the assistant do it then."
)
async def reminder(
    ctx: ToolContext,
    action: Literal["add", "list", "cancel"],
    text: Annotated[str | None, Field(description="what to remind or do (add)")] = None,
    at: Annotated[str | None, Field(description="when, ISO 8601, e.g. 2026-05-01T09:00")] = None,
    cron: Annotated[str | None, Field(description="recurring: cron, e.g. '0 9 * * 1-5'")] = None,
    mode: Literal["notify", "execute"] = "notify",
    id: Annotated[str | None, Field(description="the job's id, as listed (cancel)")] = None,
) -> dict[str, Any]:
    scheduler = ctx.services.scheduler
    if scheduler is None:
        raise ToolError("reminders are not available: the scheduler is not running")
    if action == "list":
        return {"jobs": await scheduler.list(ctx.user_id)}
    if action == "cancel":
        if not id:
            raise ToolError("id: required to cancel (see action=list)")
        if not await scheduler.cancel(ctx.user_id, id):
            raise ToolError(f"id: no reminder {id!r} for this user")
        return {"cancelled": id}
    if not text or not text.strip():
        raise ToolError("text: required to add a reminder")
    when = _parse_at(at) if at else None
    try:
        job = await scheduler.add(
            ctx.user_id, ctx.channel, ctx.chat_id, text, at=when, cron=cron or None, mode=mode
        )
    except ValueError as exc:  # the scheduler names the field: "cron: ...", "at: ..."
        raise ToolError(str(exc)) from None
    return {"added": job}
