"""`LogMirror`: WARNING+ records of the `nerve` loggers as events of the event log (SPEC AD-4)."""

from __future__ import annotations

import logging
from collections.abc import Collection

from nerve.events.log import EventLog
from nerve.events.log import log as events_logger

__all__ = ["LogMirror"]

_FROM_LOGS = {"RELOAD", "ROUTE", "CALL", "FALLBACK", "ERROR"}  # never the audit kinds


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
        if record.name == events_logger.name:  # the event log's own trouble: stderr only, no loop
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
