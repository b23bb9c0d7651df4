"""Structured records from log lines: what the Safety, Agents and Jobs pages list beyond the
WARNING+ lines `LogMirror` mirrors.

A component below the admin panel (the pipeline, the agent registry, the job scheduler) cannot
reach the panel's event log, so it says what happened as an INFO log line carrying its fields:

    log.info("agent %s did task %s", name, task,
             extra={RECORD: {"kind": "AGENT_ROUTE", "agent": name, "task": task, ...}})

`Recorder`, one handler on the `nerve` logger (installed by the pages' routes, once a process),
stores those fields as an event of that kind in the event log of every `LogMirror` attached
there, so a record goes wherever the mirrored warnings go, while the panel is open and no
longer. `message` is the line itself; the event log scrubs it and `reason`, `error` and
`subject` of configured secrets. A record is logged at INFO, so a server started with `--log-level
warning` (not the default `info`) keeps none. Lines without the attribute are not touched, nor
WARNING+ ones (the mirror has those already).
"""

from __future__ import annotations

import logging
from typing import Any

from nerve.events import LogMirror

__all__ = ["RECORD", "Recorder", "install"]

RECORD = "nerve_record"  # the LogRecord attribute `extra={RECORD: {...}}` sets
_ROOT = "nerve"


class Recorder(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        fields = getattr(record, RECORD, None)
        if record.levelno >= logging.WARNING or not isinstance(fields, dict):
            return
        try:
            kind = str(fields["kind"])
            rest: dict[str, Any] = {k: v for k, v in fields.items() if k != "kind"}
            message = record.getMessage()[:4000]
            for handler in logging.getLogger(_ROOT).handlers:
                if not isinstance(handler, LogMirror):
                    continue
                handler.events.emit(kind, logger=record.name, message=message, **dict(rest))
        except Exception:
            self.handleError(record)


_RECORDER = Recorder()


def install() -> None:
    """Attach the one `Recorder` to the `nerve` logger (idempotent)."""
    root = logging.getLogger(_ROOT)
    if _RECORDER not in root.handlers:
        root.addHandler(_RECORDER)
