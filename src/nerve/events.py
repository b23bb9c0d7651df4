"""The event log (SPEC AD-4): what happened, as JSON lines on disk and a ring in memory.

    log = EventLog(Path(".nerve/events.jsonl"))
    await log.open()                      # starts the ~1 s flusher
    log.emit("RELOAD", ok=True)           # {"seq": 1, "ts": "...Z", "kind": "RELOAD", "ok": true}
    log.recent(kinds={"ERROR"}, q="502")  # newest last, from the in-memory ring
    await log.close()                     # flushes what is left

`emit` only appends to a buffer and a ring (it runs on the gateway's hot path); a background
task writes the buffer every `flush_interval` seconds in one `write` on an O_APPEND file, so
worker processes sharing the file never interleave inside a line. Audit events (logins, config
and key changes, reloads) are written at once: an incident review needs them even after a
crash. Kinds: AUTH_LOGIN, AUTH_LOGOUT, CONFIG_SAVE, RELOAD, KEY_SET, ROUTE, CALL, FALLBACK,
ERROR, WARNING. Gateway call outcomes arrive through `on_outcome`; WARNING+ records of the
`nerve` loggers through `LogMirror`. `redact` (set by the owner) scrubs secrets out of text.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Collection
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

__all__ = ["KINDS", "EventLog", "LogMirror"]

log = logging.getLogger("nerve.events")
KINDS = ("AUTH_LOGIN", "AUTH_LOGOUT", "CONFIG_SAVE", "RELOAD", "KEY_SET", "ROUTE", "CALL",
         "FALLBACK", "ERROR", "WARNING")  # fmt: skip
AUDIT = ("AUTH_LOGIN", "AUTH_LOGOUT", "CONFIG_SAVE", "RELOAD", "KEY_SET")  # written at once
_FROM_LOGS = {"RELOAD", "ROUTE", "CALL", "FALLBACK", "ERROR"}  # never the audit kinds
_TEXT_FIELDS = ("message", "error", "reason")
_MAX_BUFFERED = 20_000  # lines kept while the disk refuses writes; older ones are dropped


class EventLog:
    def __init__(
        self,
        path: Path | None,
        *,
        ring: int = 2000,
        flush_interval: float = 1.0,
        immediate: Collection[str] = AUDIT,
        max_bytes: int = 64 * 1024 * 1024,
    ) -> None:
        self.path = path
        self.flush_interval = flush_interval
        self.immediate = frozenset(immediate)
        self.max_bytes = max_bytes
        self.redact: Callable[[str], str] | None = None
        self._ring: deque[dict[str, Any]] = deque(maxlen=ring)
        self._buffer: deque[dict[str, Any]] = deque(maxlen=_MAX_BUFFERED)
        self._lock = threading.Lock()  # log records may come from worker threads
        self._write_lock = threading.Lock()
        self._seq = itertools.count(1)
        self._task: asyncio.Task[None] | None = None
        self._failing = False
        self._second, self._prefix = -1, ""

    def emit(self, kind: str, **fields: Any) -> dict[str, Any]:
        if self.redact is not None:
            for name in _TEXT_FIELDS:
                if isinstance(fields.get(name), str):
                    fields[name] = self.redact(fields[name])
        ts = self._timestamp()
        with self._lock:
            event = {"seq": next(self._seq), "ts": ts, "kind": kind, **fields}
            self._ring.append(event)
            if self.path is not None:
                self._buffer.append(event)
        if kind in self.immediate:
            self.flush()
        return event

    def _timestamp(self) -> str:
        """UTC ISO 8601 with milliseconds; the part up to the second is formatted once a second
        (this runs twice per gateway call)."""
        now = time.time()
        second = int(now)
        if second != self._second:
            self._second = second
            self._prefix = datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%S")
        return f"{self._prefix}.{int((now - second) * 1000):03d}Z"

    def recent(
        self,
        *,
        kinds: Collection[str] | None = None,
        q: str | None = None,
        after: int = 0,
        limit: int = 200,
    ) -> list[dict[str, Any]]:
        """The newest `limit` events of the ring that match, oldest first."""
        with self._lock:
            events = list(self._ring)
        needle = (q or "").lower()
        out: list[dict[str, Any]] = []
        for event in reversed(events):
            if len(out) >= limit or event["seq"] <= after:
                break
            if kinds and event["kind"] not in kinds:
                continue
            if needle and needle not in orjson.dumps(event).decode().lower():
                continue
            out.append(event)
        return out[::-1]

    def flush(self) -> None:
        """Write the buffered events in one append; keep them if the disk refuses."""
        if self.path is None:
            return
        with self._write_lock:  # the hot path's `emit` never waits for the disk
            with self._lock:
                events = list(self._buffer)
                self._buffer.clear()
            if not events:
                return
            data = b"".join(orjson.dumps(e, default=str) + b"\n" for e in events)
            try:
                self._append(self.path, data)
            except OSError as e:
                if not self._failing:  # say it once, not every second
                    log.warning("cannot write the event log %s: %s", self.path, e.strerror)
                self._failing = True
                with self._lock:
                    self._buffer.extendleft(reversed(events))
                return
            self._failing = False

    def _append(self, path: Path, data: bytes) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, data)
            size = os.fstat(fd).st_size
        finally:
            os.close(fd)
        if size > self.max_bytes:  # keep one previous generation
            os.replace(path, path.with_name(path.name + ".1"))

    async def open(self) -> None:
        if self.path is not None and self._task is None:
            self._task = asyncio.create_task(self._flusher(), name="event log flusher")

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        self.flush()

    async def _flusher(self) -> None:
        while True:
            await asyncio.sleep(self.flush_interval)
            self.flush()

    def on_outcome(self, outcome: Any) -> None:
        """Subscriber for the gateway's call outcomes (`nerve.gateway.outcome.Outcome`)."""
        route, target = outcome.route, outcome.target
        if outcome.decided_by is not None:
            self.emit("ROUTE", route=route, decided_by=outcome.decided_by)
        latency_ms = round(outcome.latency_s * 1000, 2)
        if not outcome.ok:
            self.emit("ERROR", route=route, target=target, latency_ms=latency_ms,
                      error=str(outcome.error or "failed"))  # fmt: skip
            return
        usage = outcome.usage
        fields: dict[str, Any] = {
            "route": route,
            "target": target,
            "latency_ms": latency_ms,
            "prompt_tokens": usage.prompt_tokens if usage else None,
            "completion_tokens": usage.completion_tokens if usage else None,
            "total_tokens": usage.total_tokens if usage else None,
            "cost_usd": outcome.cost_usd,
        }
        if outcome.fallback:
            attempts = [": ".join(map(str, a)) if isinstance(a, tuple | list) else str(a)
                        for a in (outcome.attempts or ())]  # fmt: skip
            message = "; ".join(attempts)
            self.emit("FALLBACK", **fields, message=message)
        else:
            self.emit("CALL", **fields)


class LogMirror(logging.Handler):
    """Mirrors WARNING+ records of the `nerve` loggers into an EventLog as WARNING/ERROR events
    (or as the kind their message starts with, e.g. the server's "RELOAD config applied").

    `skip` drops records whose message starts with one of its prefixes: the gateway's own
    per-call FALLBACK/ERROR lines, which arrive as structured outcomes already.
    """

    def __init__(self, events: EventLog, *, skip: Collection[str] = ()) -> None:
        super().__init__(logging.WARNING)
        self.events = events
        self.skip = tuple(skip)

    def emit(self, record: logging.LogRecord) -> None:
        if record.name == log.name:  # the event log's own trouble: stderr only, no loop
            return
        try:
            message = record.getMessage()
            if self.skip and message.startswith(self.skip):
                return
            if record.exc_info and record.exc_info[1] is not None:
                message += f" ({type(record.exc_info[1]).__name__}: {record.exc_info[1]})"
            kind = "ERROR" if record.levelno >= logging.ERROR else "WARNING"
            first = message.split(" ", 1)[0]
            if first in _FROM_LOGS:  # "RELOAD config applied: ..." is a RELOAD event
                kind = first
            self.events.emit(kind, logger=record.name, message=message[:4000])
        except Exception:
            self.handleError(record)
