"""`EventLog`: buffers events and hands them to a sink in batches (SPEC AD-4).

`emit` runs on the gateway's hot path (twice per call): it formats the timestamp, appends to a
buffer under a lock and returns; a background task hands the buffer to the sink every
`flush_interval` seconds, one batch at a time, so one process's events are stored in the order
they were emitted. Audit events (logins, config and key changes, reloads) wake it at once;
`record` emits one and waits until it is stored, so a login is on record before its answer
leaves. A sink that refuses keeps the events buffered (at most `_MAX_BUFFERED`) and is retried
at the next flush. Kinds: AUTH_LOGIN, AUTH_LOGOUT, CONFIG_SAVE, RELOAD, KEY_SET, ROUTE, CALL,
FALLBACK, ERROR, WARNING. A stored event also carries the `pid` of the process that emitted it
(added at flush: a key added after `**fields` in `emit` cost 140 ns a call).
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
from typing import Any, Protocol

import orjson

__all__ = ["AUDIT", "KINDS", "EventLog", "EventSink"]

log = logging.getLogger("nerve.events")  # LogMirror never mirrors this logger (no loop)
KINDS = ("AUTH_LOGIN", "AUTH_LOGOUT", "CONFIG_SAVE", "RELOAD", "KEY_SET", "ROUTE", "CALL",
         "FALLBACK", "ERROR", "WARNING")  # fmt: skip
AUDIT = ("AUTH_LOGIN", "AUTH_LOGOUT", "CONFIG_SAVE", "RELOAD", "KEY_SET")  # written at once
_TEXT_FIELDS = ("message", "error", "reason", "subject")
_MAX_BUFFERED = 20_000  # events kept while the sink refuses writes; older ones are dropped
_CLOSE_SECONDS = 10.0


class EventSink(Protocol):
    async def open(self) -> None: ...
    async def close(self) -> None: ...

    async def write(self, events: list[dict[str, Any]]) -> None:
        """Store `events` in order, setting each one's `seq`; raise to have them kept."""

    async def read(
        self, *, kinds: Collection[str] | None, q: str | None, after: int, limit: int
    ) -> list[dict[str, Any]]:
        """The newest `limit` stored events with seq > `after` that match, oldest first."""


class EventLog:
    def __init__(
        self,
        sink: EventSink | None = None,
        *,
        ring: int = 2000,
        flush_interval: float = 1.0,
        immediate: Collection[str] = AUDIT,
    ) -> None:
        self.sink = sink
        self.flush_interval = flush_interval
        self.immediate = frozenset(immediate)
        self.redact: Callable[[str], str] | None = None
        self._ring: deque[dict[str, Any]] = deque(maxlen=ring)  # without a sink only
        self._buffer: deque[dict[str, Any]] = deque(maxlen=_MAX_BUFFERED)
        self._lock = threading.Lock()  # log records may come from worker threads
        self._seq = itertools.count(1)  # without a sink; a sink numbers what it stores
        self._pid = os.getpid()
        self._flushing = asyncio.Lock()
        self._due = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self._failing = False
        self._second, self._prefix = -1, ""

    def emit(self, kind: str, **fields: Any) -> dict[str, Any]:
        if self.redact is not None:
            for name in _TEXT_FIELDS:
                if isinstance(fields.get(name), str):
                    fields[name] = self.redact(fields[name])
        event = {"seq": 0, "ts": self._timestamp(), "kind": kind, **fields}  # seq: the sink's
        with self._lock:
            if self.sink is None:
                event["seq"] = next(self._seq)
                self._ring.append(event)
                return event
            self._buffer.append(event)
        if kind in self.immediate and self._loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: close() flushed
                self._loop.call_soon_threadsafe(self._due.set)
        return event

    async def record(self, kind: str, **fields: Any) -> dict[str, Any]:
        """Emit an event and return once it is stored (or kept for retry, when the sink refuses)."""
        event = self.emit(kind, **fields)
        await self.flush()
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

    async def recent(
        self,
        *,
        kinds: Collection[str] | None = None,
        q: str | None = None,
        after: int = 0,
        limit: int = 200,
    ) -> list[dict[str, Any]]:
        """The newest `limit` events that match, oldest first: the shared log's (after storing
        this process's own buffer, so a reader sees what it just did), else the ring's."""
        if self.sink is not None:
            await self.flush()
            return await self.sink.read(kinds=kinds, q=q, after=after, limit=limit)
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

    async def flush(self) -> None:
        """Hand the buffered events to the sink as one batch; keep them if it refuses."""
        if self.sink is None:
            return
        async with self._flushing:  # batches in order; the hot path never waits for this
            with self._lock:
                events = list(self._buffer)
                self._buffer.clear()
            if not events:
                return
            for event in events:  # the writer is the emitter: stamped here, off the hot path
                event.setdefault("pid", self._pid)
            try:
                await self.sink.write(events)
            except Exception as e:  # the disk or the database refused: retry next time
                if not self._failing:  # say it once, not every second
                    log.warning("cannot write the event log (%s): %s", self.sink, e)
                self._failing = True
                with self._lock:
                    self._buffer.extendleft(reversed(events))
                return
            self._failing = False

    async def open(self) -> None:
        if self.sink is not None and self._task is None:
            await self.sink.open()
            self._pid = os.getpid()
            self._loop = asyncio.get_running_loop()
            self._stopping = False
            self._task = asyncio.create_task(self._flusher(), name="event log flusher")

    async def close(self) -> None:
        """Stop the flusher (never mid-write) and store what is left, within `_CLOSE_SECONDS`
        (a store that hangs must not hold up shutdown), then close the sink."""
        if self.sink is None:
            return
        try:
            async with asyncio.timeout(_CLOSE_SECONDS):
                if self._task is not None:
                    self._stopping = True
                    self._due.set()
                    await self._task
                await self.flush()
        except TimeoutError:
            log.warning("event log: %d events not stored at shutdown", len(self._buffer))
        self._task = None
        await self.sink.close()

    async def _flusher(self) -> None:
        while not self._stopping:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.flush_interval):
                    await self._due.wait()
            self._due.clear()
            await self.flush()

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
            self.emit("FALLBACK", **fields, message="; ".join(attempts))
        else:
            self.emit("CALL", **fields)
