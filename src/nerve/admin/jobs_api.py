"""The admin panel's Jobs page: every pending reminder and cron job, by channel, and cancelling
one (nerve.assistant.jobs).

    GET    /admin/api/jobs          {jobs: [...], channels: {name: count}, deliveries: [...],
                                     now, late_after_s, timezone}
    DELETE /admin/api/jobs/{id}     {cancelled: id}; 404 for an unknown id

Each job is the scheduler's `describe` (id, text, mode, cron, next_run, channel, chat_id) plus
`user_id`, `due_at` (epoch seconds) and `state`: "pending", "late" (due longer ago than
`late_after_seconds`: no process here or elsewhere could deliver it yet) or "delivering" (a
replica holds a claim on it). Delivered one-shot reminders are deleted by the scheduler; a
cron job delivered shows its next firing. Each delivery is on record in the shared event log
(the scheduler's JOB_DELIVERED records, see records.py): `deliveries`, newest first, are the
last 100 of them, {seq, ts, id, user_id, channel, chat_id, mode, cron, text, due_at,
delivered_at, late}, times in epoch seconds. The store is the shared one
(`storage.url`), so the list is every replica's. Without the assistant in this process (no
channel served) there is no scheduler: 404 `jobs_unavailable`.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from nerve.admin.http import Handler
from nerve.admin.panel import AdminPanel
from nerve.admin.records import install
from nerve.assistant.jobs.scheduler import Scheduler
from nerve.assistant.jobs.store import Job
from nerve.errors import NotFound

__all__ = ["jobs_routes"]

PAGE = 500
MAX_JOBS = 5000  # a page of the panel, not an export
DELIVERIES = 100
_DELIVERY = ("id", "user_id", "channel", "chat_id", "mode", "cron", "due_at", "delivered_at",
             "late")  # fmt: skip


def _scheduler(host: Any) -> Scheduler:
    jobs = getattr(getattr(host, "assistant", None), "jobs", None)
    if jobs is None:
        raise NotFound(
            "jobs are unavailable: the assistant does not run in this server (no channel)",
            code="jobs_unavailable",
        )
    scheduler: Scheduler = jobs.scheduler
    return scheduler


async def _all(scheduler: Scheduler) -> list[Job]:
    """Every job, soonest first: the store's `due` with no upper bound, a page at a time."""
    found: list[Job] = []
    after: tuple[float, str] | None = None
    while len(found) < MAX_JOBS:
        page = await scheduler.store.due(math.inf, PAGE, after)
        found += page
        if len(page) < PAGE:
            break
        after = (page[-1].next_run, page[-1].id)
    return found


def _state(job: Job, now: float, late_after: float) -> str:
    if job.claimed_by is not None and job.next_run > now:
        return "delivering"
    return "late" if now - job.due_at > late_after else "pending"


def _delivery(event: dict[str, Any]) -> dict[str, Any]:
    return {"seq": event["seq"], "ts": event["ts"], "text": event.get("subject", ""),
            **{k: event.get(k) for k in _DELIVERY}}  # fmt: skip


def jobs_routes(panel: AdminPanel) -> list[tuple[str, Handler, list[str]]]:
    host: Any = panel.host
    install()

    async def listing(request: Request) -> Response:
        scheduler = _scheduler(host)
        now = scheduler.clock()
        jobs = sorted(await _all(scheduler), key=lambda j: (j.channel, j.due_at, j.id))
        views = [
            {**scheduler.describe(j), "user_id": j.user_id, "due_at": j.due_at,
             "state": _state(j, now, scheduler.late_after)}
            for j in jobs
        ]  # fmt: skip
        channels = Counter(j.channel for j in jobs)
        delivered = await panel.events.recent(kinds={"JOB_DELIVERED"}, limit=DELIVERIES)
        return JSONResponse({
            "jobs": views, "channels": dict(channels), "now": now,
            "deliveries": [_delivery(e) for e in reversed(delivered)],
            "late_after_s": scheduler.late_after, "timezone": str(scheduler.tz),
        })  # fmt: skip

    async def cancel(request: Request) -> Response:
        scheduler = _scheduler(host)
        job_id = request.path_params["job_id"]
        job = await scheduler.store.get(job_id)
        if job is None or not await scheduler.cancel(job.user_id, job_id):
            raise NotFound(f"no job with id {job_id!r} (delivered or cancelled already?)",
                           param="id")  # fmt: skip
        client = panel.client(request.scope)
        await panel.events.record("JOB_CANCEL", id=job_id, user_id=job.user_id,
                                  channel=job.channel, client=client)  # fmt: skip
        return JSONResponse({"cancelled": job_id})

    return [
        ("/admin/api/jobs", listing, ["GET"]),
        ("/admin/api/jobs/{job_id}", cancel, ["DELETE"]),
    ]
