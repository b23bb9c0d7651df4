"""The `reminder` tool through the registry's chokepoint, on a real scheduler (SQLite)."""

from __future__ import annotations

import json
from pathlib import Path

from nerve.assistant.jobs import Job, Scheduler
from nerve.assistant.jobs.store import SQLiteJobStore
from nerve.gateway.resilience import ManualClock
from nerve.tools import Services, ToolContext, builtin_registry
from tests.jobs.conftest import START


async def test_reminder_adds_lists_cancels_and_fires_where_it_was_asked(tmp_path: Path) -> None:
    fired: list[Job] = []

    async def deliver(job: Job, late: str | None) -> bool:
        fired.append(job)
        return True

    scheduler = Scheduler(SQLiteJobStore(tmp_path / "j.db"), deliver, ManualClock(START))
    await scheduler.open()
    try:
        registry = builtin_registry(plugins=False)
        assert "reminder" in registry.names()
        schema = registry.get("reminder").parameters  # type: ignore[union-attr]
        assert set(schema["properties"]) == {"action", "text", "at", "cron", "mode", "id"}
        ctx = ToolContext("u1", "discord", "chan-9", services=Services(scheduler=scheduler))

        added = await registry.execute(
            "reminder", {"action": "add", "text": "call mom", "at": "2026-05-28T21:00:00Z"}, ctx
        )
        assert added.ok, added.error
        job_id = added.content["added"]["id"]
        daily = await registry.execute(
            "reminder", json.dumps({"action": "add", "text": "news", "cron": "0 8 * * *",
                                    "mode": "execute"}), ctx)  # fmt: skip
        assert daily.ok and daily.content["added"]["mode"] == "execute"
        listed = await registry.execute("reminder", {"action": "list"}, ctx)
        assert [j["text"] for j in listed.content["jobs"]] == ["call mom", "news"]

        assert await scheduler.tick(START + 3600) == 1
        assert (fired[0].channel, fired[0].chat_id, fired[0].user_id) == ("discord", "chan-9", "u1")

        other = ToolContext("u2", "web", "x", services=Services(scheduler=scheduler))
        refused = await registry.execute("reminder", {"action": "cancel", "id": job_id}, other)
        assert not refused.ok and "id:" in (refused.error or "")
        cancel = await registry.execute(
            "reminder", {"action": "cancel", "id": daily.content["added"]["id"]}, ctx
        )
        assert cancel.ok and (await scheduler.list("u1")) == []
    finally:
        await scheduler.close()


async def test_bad_at_or_cron_is_an_error_naming_the_field(tmp_path: Path) -> None:
    scheduler = Scheduler(SQLiteJobStore(tmp_path / "j.db"), _never, ManualClock(START))
    await scheduler.open()
    try:
        registry = builtin_registry(plugins=False)
        ctx = ToolContext("u1", "web", "c", services=Services(scheduler=scheduler))
        for args, field in [
            ({"action": "add", "text": "x", "at": "next tuesday-ish"}, "at:"),
            ({"action": "add", "text": "x", "cron": "every morning"}, "cron:"),
            ({"action": "add", "text": "x", "at": "2020-01-01T00:00"}, "at:"),
            ({"action": "add", "at": "2026-06-01T09:00"}, "text:"),
            ({"action": "cancel"}, "id:"),
        ]:
            result = await registry.execute("reminder", args, ctx)
            assert not result.ok and field in (result.error or ""), (args, result.error)
        bad_mode = await registry.execute("reminder", {"action": "add", "mode": "loud"}, ctx)
        assert not bad_mode.ok and "mode" in (bad_mode.error or "")
        missing = await registry.execute(
            "reminder", {"action": "list"}, ToolContext("u1", services=Services())
        )
        assert not missing.ok and "scheduler" in (missing.error or "")
    finally:
        await scheduler.close()


async def _never(job: Job, late: str | None) -> bool:
    raise AssertionError("nothing should fire")
