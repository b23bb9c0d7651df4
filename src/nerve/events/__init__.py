"""The event log (SPEC AD-4): what happened, in one log that every process on a store shares.

    log = EventLog(JsonlFile(Path(".nerve/events.jsonl")))   # or EventTable(dsn, schema=...)
    await log.open()                      # opens the sink, starts the ~1 s flusher
    log.emit("CALL", route="default")     # buffered: the gateway's hot path never waits
    await log.record("RELOAD", ok=True)   # an audit event: written before this returns
    await log.recent(kinds={"ERROR"}, q="502", after=0, limit=200)   # newest last
    await log.close()                     # flushes what is left

Seam: `EventSink` (write, read). `JsonlFile` is the shared log of the processes on one machine
(SQLite storage: the file beside the database); `EventTable` is PostgreSQL's, shared by every
replica. Either gives each event its `seq` as it is stored, unique and increasing in the order
the log holds them, so `after=<seq>` never skips another process's late batch. Without a sink
(`admin.event_log: ""`) events live in this process's ring only. `LogMirror` turns WARNING+
records of the `nerve` loggers into events. To add a sink: implement `EventSink`, give it the
tests of tests/admin/test_events.py.
"""

from nerve.events.jsonl import JsonlFile
from nerve.events.log import AUDIT, KINDS, EventLog, EventSink
from nerve.events.mirror import LogMirror
from nerve.events.table import EventTable

__all__ = ["AUDIT", "KINDS", "EventLog", "EventSink", "EventTable", "JsonlFile", "LogMirror"]
