"""The stream guard's core, shared by the three formats: hold a tool call, judge it, release it.

In `block` mode events pass through one ordered queue. An event of a tool call not yet complete
waits there, and so does anything after it, pings and comments too (so the client sees the
events in their order); all else goes straight out. When a call completes it is judged, and
the queue is released from its front as far as its calls are judged: an allowed call's events
as they came, a blocked call's replaced by the format's text (`_replacement`). In `flag` mode
nothing ever waits: calls are judged as they complete and only reported.

The guarantee, while no call is blocked: joined, what `feed` and `finish` return is exactly the
bytes fed, plus (when a call was flagged) one SSE comment event just before the final event.
Each `feed` returns at most one chunk. While no call is held, a frame that ends where an event
ends (nerve's own and passthrough frames always do) goes out at once, unchanged, as one chunk,
however many events it holds; events held for a call go out later, joined with the event that
completed it; a frame ending inside an event goes out up to its last whole event, the rest
with the next frame (or at `finish`, unless in `block` mode that cut-off rest could be part of a
tool call). A blocked call changes only its own events and what must agree with them: indexes,
sequence numbers, stop reasons, a final event's output.

A bug in the guard never raises into the response path: in `flag` mode the rest of the stream
passes unread; in `block` mode the stream ends with the format's error event (nothing held is
sent), so a guard failure cannot let an unjudged call through.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from nerve.gateway.guard import sse
from nerve.gateway.guard.judged import CallJudge, Judged, comment
from nerve.safety.verdict import Verdict

__all__ = ["Call", "Entry", "GuardError", "GuardStream", "PassStream"]

log = logging.getLogger("nerve.gateway.guard")
_WITHHELD = Verdict(False, "high", "the stream ended before this tool call was complete", "rule")


class GuardError(Exception):
    """The stream did what the guard cannot judge safely: more of a call it already judged."""


@dataclass(slots=True, eq=False)  # compared and hashed by identity
class Call:
    """One tool call seen in the stream. `key` is its place in the format (chat: choice and
    index; messages: block index; responses: output index)."""

    key: Any
    name: str
    call_id: str | None
    freeform: bool = False
    parts: list[str] = field(default_factory=list)  # argument fragments as streamed
    judged: Judged | None = None
    done: bool = False
    blocked: bool = False
    noticed: bool = False  # its replacement went out
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Entry:
    """One event: its bytes, the calls it belongs to, and its JSON when it was read."""

    raw: bytes
    owners: tuple[Any, ...] = ()
    data: dict[str, Any] | None = None
    name: str | None = None  # its `event:` name


class GuardStream(ABC):
    """A per-stream filter: `await feed(frame)` returns what to send now (at most one chunk),
    `finish()` what is left at the end. `blocked` and `flagged` list the calls so far."""

    # Bytes an event must hold to start or carry a tool call, and bytes of the final events a
    # blocked or flagged call changes: plain substrings, the cheapest test there is per frame.
    mark: tuple[bytes, ...]
    tail: tuple[bytes, ...]
    late: tuple[bytes, ...] = ()  # bytes of a call's later events: looked for once one began

    def __init__(self, judge: CallJudge, *, block: bool) -> None:
        self.blocked: list[Judged] = []
        self.flagged: list[Judged] = []
        self.error: str | None = None
        self._judge = judge
        self._block = block
        self._buf = b""  # the start of an event cut by the frame boundary
        self._queue: list[Entry] = []
        self._calls: dict[Any, Call] = {}
        self._open: dict[Any, Call] = {}  # calls not yet complete, in the order they began
        self._noted = False
        self._bypass = self._dead = False
        self._every = False  # read every event from now on (a format's choice)

    async def feed(self, frame: bytes) -> list[bytes]:
        if self._bypass:
            return [frame]
        if self._dead:
            return []
        idle = not (self._buf or self._open or self._queue)
        if idle and sse.whole(frame) and not self._wants(frame):
            self._glance(frame)
            return [frame]  # the hot path: nothing here the guard reads
        data, self._buf = self._buf + frame, b""
        try:
            events, self._buf = sse.split_events(data)
            out: list[bytes] = []
            for event in events:
                if self._open or self._queue or self._wants(event):
                    out += await self._event(event)
                else:
                    self._glance(event)
                    out.append(event)
            return [b"".join(out)] if out else []
        except Exception as exc:
            return self._fail(exc, data)

    def finish(self) -> list[bytes]:
        """At the end of the stream. A call still open then was cut off: in `block` mode it is
        withheld (reported as blocked); in `flag` mode its events were sent already."""
        if self._bypass or self._dead:
            rest, self._buf = self._buf, b""
            return [rest] if rest and self._bypass else []
        try:
            out: list[bytes] = []
            for call in list(self._open.values()):
                self._open.pop(call.key)
                call.done = True
                if self._block:
                    call.blocked = True
                    call.judged = Judged(call.name, call.call_id, "?", "", None, _WITHHELD)
                    self.blocked.append(call.judged)
            out += self._flush()
            out += self._note()
            if self._buf and not (self._block and any(m in self._buf for m in self.mark)):
                out.append(self._buf)
            self._buf = b""
            return [b"".join(out)] if out else []
        except Exception as exc:
            return self._fail(exc, b"")

    # --- for the formats --------------------------------------------------------------------

    @abstractmethod
    async def _event(self, event: bytes) -> list[bytes]:
        """Read one whole event; return what to send now."""

    @abstractmethod
    def _replacement(self, call: Call, entry: Entry) -> list[bytes]:
        """The text events a blocked call is replaced with, sent where its first event was."""

    @abstractmethod
    def _error_event(self, message: str) -> bytes:
        """The format's error event, which ends a stream the guard failed on."""

    def _release(self, entry: Entry, calls: list[Call]) -> list[bytes]:
        """An event leaving the queue: dropped with its blocked call, else as it came."""
        return [] if any(c.blocked for c in calls) else [entry.raw]

    def _glance(self, data: bytes) -> None:  # noqa: B027 - optional: only chat looks
        """See an event that goes out unread (cheaply: this is the hot path)."""

    def _wants(self, data: bytes) -> bool:
        if self._every:
            return True
        for mark in self.mark:  # a loop, not any(): its generator costs more, per frame
            if mark in data:
                return True
        if self._calls and any(t in data for t in self.late):
            return True
        if self.blocked or self.flagged:
            return any(t in data for t in self.tail)
        return False

    def _begin(self, call: Call) -> Call:
        self._calls[call.key] = call
        self._open[call.key] = call
        return call

    def _emit(self, entry: Entry) -> list[bytes]:
        """Send an event now, or queue it behind (or with) a call being held."""
        if self._block and (entry.owners or self._queue):
            self._queue.append(entry)
            return self._flush()
        return self._release(entry, [self._calls[k] for k in entry.owners])

    async def _complete(self, call: Call, arguments: object) -> list[bytes]:
        """The call is whole: judge it, then release what the queue can."""
        if call.done:
            return []
        call.done = True
        self._open.pop(call.key, None)
        judged = await self._judge(
            call.name, arguments, freeform=call.freeform, call_id=call.call_id
        )
        call.judged = judged
        if judged is not None and not judged.allowed:
            if self._block:
                call.blocked = True
                self.blocked.append(judged)
            else:
                self.flagged.append(judged)
        return self._flush()

    async def _complete_all(self) -> list[bytes]:
        out: list[bytes] = []
        for call in list(self._open.values()):
            out += await self._complete(call, self._arguments(call))
        return out

    def _arguments(self, call: Call) -> object:
        """What a call cut short at the end of the stream is judged on."""
        return "".join(call.parts)

    def _flush(self) -> list[bytes]:
        out: list[bytes] = []
        while self._queue:
            entry = self._queue[0]
            calls = [self._calls[k] for k in entry.owners]
            if not all(c.done for c in calls):
                break
            self._queue.pop(0)
            out += self._release(entry, calls)
            for call in calls:  # in place of the call's first event, after what is left of it
                if call.blocked and not call.noticed:
                    call.noticed = True
                    out += self._replacement(call, entry)
        return out

    def _note(self) -> list[bytes]:
        """The comment naming what was blocked or flagged, once, before the final event."""
        if self._noted or not (self.blocked or self.flagged):
            return []
        self._noted = True
        return [comment(self.blocked, self.flagged)]

    def _fail(self, exc: Exception, pending: bytes) -> list[bytes]:
        self.error = f"{type(exc).__name__}: {exc}"[:300]
        if isinstance(exc, GuardError):  # the upstream's doing, not a bug: no traceback
            log.warning("tool-call guard: %s", exc)
        else:
            log.error("the tool-call guard failed on a stream", exc_info=exc)
        self._queue.clear()
        self._open.clear()
        self._buf = b""
        if not self._block:
            self._bypass = True
            return [pending] if pending else []
        self._dead = True
        message = f"nerve's tool-call guard failed ({type(exc).__name__}); the answer was cut"
        return [self._error_event(message)]


class PassStream:
    """The guard switched off: frames go through untouched, nothing is read."""

    blocked: list[Judged]
    flagged: list[Judged]
    error: str | None = None

    def __init__(self) -> None:
        self.blocked, self.flagged = [], []

    async def feed(self, frame: bytes) -> list[bytes]:
        return [frame]

    def finish(self) -> list[bytes]:
        return []
