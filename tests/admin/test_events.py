"""The event log (SPEC AD-4): buffered batches to a sink (here the JSONL file), a filterable ring
without one, gateway outcomes and mirrored log records as events."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from nerve.admin.panel import event_sink
from nerve.config_sections import AdminConfig
from nerve.events import EventLog, EventTable, JsonlFile, LogMirror
from nerve.gateway.outcome import Outcome
from nerve.gateway.stats import Usage


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def outcome(**overrides: Any) -> Outcome:
    fields: dict[str, Any] = dict(
        route="code", target="claude/sonnet", ok=True, latency_s=0.25,
        usage=Usage(prompt_tokens=10, completion_tokens=5, total_tokens=15), cost_usd=0.001,
        fallback=False, error=None, attempts=(), decided_by=None, at=time.time(),
    )  # fmt: skip
    return Outcome(**{**fields, **overrides})


async def test_events_are_buffered_and_written_as_json_lines_on_close(tmp_path: Path) -> None:
    path = tmp_path / "log" / "events.jsonl"
    log = EventLog(JsonlFile(path), flush_interval=3600)
    await log.open()
    log.emit("CALL", route="default")
    assert not path.exists()  # buffered: the hot path does not touch the disk
    await log.record("AUTH_LOGIN", ok=False, client="10.1.1.1")  # audit: stored before it returns
    assert [e["kind"] for e in lines(path)] == ["CALL", "AUTH_LOGIN"]
    log.emit("ERROR", message="late")
    await log.close()
    written = lines(path)
    assert [e["seq"] for e in written] == [1, 2, 3]
    assert written[2]["message"] == "late" and written[2]["pid"] == os.getpid()
    stamp = datetime.fromisoformat(written[2]["ts"].replace("Z", "+00:00"))
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", written[2]["ts"])
    assert abs((datetime.now(UTC) - stamp).total_seconds()) < 60
    assert path.stat().st_mode & 0o777 == 0o600


class WatchedFile(JsonlFile):
    """The real JSONL sink, telling when a batch has been written to it."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.wrote = asyncio.Event()

    async def write(self, events: list[dict[str, Any]]) -> None:
        await super().write(events)
        self.wrote.set()


async def test_the_background_task_flushes_without_being_asked(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    sink = WatchedFile(path)
    log = EventLog(sink, flush_interval=0.01)
    await log.open()
    log.emit("CALL")
    await asyncio.wait_for(sink.wrote.wait(), timeout=5)  # nobody asked for a flush
    await log.close()
    assert [e["kind"] for e in lines(path)] == ["CALL"]


async def test_an_audit_event_emitted_without_waiting_wakes_the_flusher(tmp_path: Path) -> None:
    """A RELOAD mirrored from a log record (sync) is written at once, not after the interval."""
    path = tmp_path / "events.jsonl"
    sink = WatchedFile(path)
    log = EventLog(sink, flush_interval=3600)
    await log.open()
    log.emit("RELOAD", message="config applied")
    await asyncio.wait_for(sink.wrote.wait(), timeout=5)  # not after the hour
    await log.close()
    assert [e["kind"] for e in lines(path)] == ["RELOAD"]


async def test_without_a_sink_recent_filters_the_ring_by_kind_text_and_sequence() -> None:
    log = EventLog(None, ring=5)
    for i in range(7):
        log.emit("CALL" if i % 2 else "ERROR", message=f"number {i}")
    assert [e["message"] for e in await log.recent()] == [f"number {i}" for i in range(2, 7)]
    assert [e["kind"] for e in await log.recent(kinds={"CALL"})] == ["CALL", "CALL"]
    assert [e["message"] for e in await log.recent(q="NUMBER 4")] == ["number 4"]
    assert [e["seq"] for e in await log.recent(after=5)] == [6, 7]
    assert [e["seq"] for e in await log.recent(limit=2)] == [6, 7]


async def test_gateway_outcomes_become_call_fallback_error_and_route_events() -> None:
    """AD-4: one CALL, FALLBACK or ERROR per outcome; ROUTE when the cascade decided."""
    log = EventLog(None)
    log.on_outcome(outcome(decided_by="rules"))
    log.on_outcome(outcome(fallback=True, attempts=(("openai/x", "upstream answered 500"),)))
    log.on_outcome(outcome(ok=False, usage=None, error="UpstreamTimeout: upstream timed out"))
    events = await log.recent()
    assert [e["kind"] for e in events] == ["ROUTE", "CALL", "FALLBACK", "ERROR"]
    assert events[0]["decided_by"] == "rules"
    assert events[1]["total_tokens"] == 15 and events[1]["latency_ms"] == 250.0
    assert events[2]["message"] == "openai/x: upstream answered 500"
    assert events[3]["error"].startswith("UpstreamTimeout")


async def test_warning_records_of_nerve_loggers_are_mirrored(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log = EventLog(None)
    mirror = LogMirror(log, skip=("FALLBACK route=",))
    logger = logging.getLogger("nerve.test_events")
    logger.addHandler(mirror)
    try:
        logger.info("not mirrored")
        logger.warning("provider %s has no API key", "openai")
        logger.warning("RELOAD config applied: changed routes")
        logger.warning("FALLBACK route=default served by b")  # an outcome carries it already
        logger.warning("AUTH_LOGIN ok=true")  # a log line cannot forge an audit event
        try:
            raise ValueError("bad")
        except ValueError:
            logger.exception("probe failed")
    finally:
        logger.removeHandler(mirror)
    events = await log.recent()
    assert [e["kind"] for e in events] == ["WARNING", "RELOAD", "WARNING", "ERROR"]
    assert events[0]["message"] == "provider openai has no API key"
    assert events[3]["message"] == "probe failed (ValueError: bad)"


async def test_secrets_are_scrubbed_from_free_text() -> None:
    log = EventLog(None)
    log.redact = lambda text: text.replace("sk-live-abcdef", "***")
    log.on_outcome(outcome(ok=False, error="UpstreamStatus: bad key sk-live-abcdef"))
    assert (await log.recent())[0]["error"] == "UpstreamStatus: bad key ***"
    # A record's subject (the start of a text a user sent, a reminder's text) too.
    log.emit("VERDICT", subject="deploy with sk-live-abcdef", reason="ok")
    assert (await log.recent(kinds={"VERDICT"}))[0]["subject"] == "deploy with ***"


async def test_a_refusing_disk_keeps_the_events_and_says_so_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    sink = JsonlFile(blocker / "events.jsonl")  # its directory is a file
    log = EventLog(sink)
    log.emit("CALL")
    await log.flush()
    await log.flush()
    warnings = [r for r in caplog.records if "cannot write the event log" in r.getMessage()]
    assert len(warnings) == 1
    sink.path = tmp_path / "events.jsonl"
    await log.flush()
    assert [e["kind"] for e in lines(sink.path)] == ["CALL"]


@pytest.mark.parametrize(
    ("event_log", "storage", "expected"),
    [
        (None, "sqlite:////data/nerve.db", "file /data/events.jsonl"),  # beside the database
        (None, "sqlite:///:memory:", "file state/events.jsonl"),
        (None, "postgresql://u@127.0.0.1/db?schema=s", "table s"),
        ("/var/log/nerve.jsonl", "postgresql://u@127.0.0.1/db", "file /var/log/nerve.jsonl"),
        ("", "sqlite:////data/nerve.db", "none"),
    ],
)
def test_the_event_log_goes_where_the_store_is_unless_a_file_is_named(
    event_log: str | None, storage: str, expected: str
) -> None:
    """AD-4 + ST: by default the shared log of the store: the table on PostgreSQL, the JSONL
    file beside the SQLite database; `admin.event_log` names a file, "" none."""
    sink = event_sink(AdminConfig(event_log=event_log, state_dir="state"), storage)
    if isinstance(sink, JsonlFile):
        assert f"file {sink.path}" == expected
    elif isinstance(sink, EventTable):
        assert f"table {sink.schema}" == expected
    else:
        assert sink is None and expected == "none"
