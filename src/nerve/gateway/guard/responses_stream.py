"""The stream guard for OpenAI Responses: `event: response.*` events with sequence numbers.

A call item (function_call, custom_tool_call, local_shell_call) is held from its
output_item.added to its output_item.done, every event of its output_index with it, and
judged on the done item (on what streamed so far if the response ends first). A blocked call
is replaced, at the same output_index, by an assistant message item holding the notice (the
six events a message item streams as), and the final event's `response.output` gets the same
message item in the call's place. From the first replacement on, sequence numbers are
renumbered so they stay consecutive; before it, no event is touched.
"""

from __future__ import annotations

import re
from typing import Any

from nerve.gateway.guard import sse
from nerve.gateway.guard.answers import call_of, message_item, replacement_id
from nerve.gateway.guard.stream import Call, Entry, GuardError, GuardStream

__all__ = ["ResponsesStream"]

JSON = dict[str, Any]
_CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
_FINAL = frozenset({"response.completed", "response.incomplete", "response.failed"})
_SEQ = re.compile(rb'(?<!\\)"sequence_number"\s*:\s*(\d+)')


def _object(value: Any) -> JSON:
    return value if isinstance(value, dict) else {}


class ResponsesStream(GuardStream):
    # the call items (function_call, custom_tool_call, local_shell_call) and the events of
    # their arguments (function_call_arguments.*, custom_tool_call_input.*: a late one must
    # not slip by)
    mark = (b"_call",)
    tail = (b"response.completed", b"response.incomplete", b"response.failed")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._renumber = False  # a replacement changed the count of events
        self._last_seq: int | None = None  # the last sequence number sent

    async def _event(self, event: bytes) -> list[bytes]:
        name, data = sse.fields(event)
        if data is None:
            return self._emit(Entry(event, name=name))
        kind = sse.event_type(name, data)
        if kind in _FINAL:
            if not (self._open or self.blocked or self.flagged or self._renumber):
                return self._emit(Entry(event, name=name))
            payload = sse.load(data)
            out = await self._complete_from(payload)
            return out + self._note() + self._emit(Entry(event, (), payload, name))
        if kind == "response.output_item.added" and b"_call" in data:
            payload = sse.load(data) or {}
            item = _object(payload.get("item"))
            found = call_of(item) if item.get("type") in _CALLS else None
            if found is None:
                return self._emit(Entry(event, (), payload, name))
            key = payload.get("output_index", item.get("id"))
            call_id = item.get("call_id") if isinstance(item.get("call_id"), str) else None
            started = self._begin(Call(key, found[0], call_id, freeform=found[2]))
            started.extra["item"] = item
            return self._emit(Entry(event, (key,), payload, name))
        if not (self._open or self._calls):
            return self._emit(Entry(event, name=name))
        payload = sse.load(data) or {}
        key = payload.get("output_index", payload.get("item_id"))
        call = self._open.get(key)
        if call is None:
            if key is not None and key in self._calls:
                raise GuardError(f"the call at output {key} continued after it was judged")
            return self._emit(Entry(event, (), payload, name))
        if isinstance(kind, str) and kind.endswith(".delta"):
            delta = payload.get("delta")
            if isinstance(delta, str):
                call.parts.append(delta)
        out = self._emit(Entry(event, (call.key,), payload, name))
        if kind == "response.output_item.done":
            call.extra["done"] = _object(payload.get("item"))
            out += await self._complete(call, self._arguments(call))
        return out

    async def _complete_from(self, payload: JSON | None) -> list[bytes]:
        """At the final event: the calls still open are judged on its output's items."""
        output = _object(_object(payload).get("response")).get("output")
        items = [i for i in output if isinstance(i, dict)] if isinstance(output, list) else []
        for call in self._open.values():
            item_id = call.extra["item"].get("id")
            match = next((i for i in items if item_id and i.get("id") == item_id), None)
            if match is not None:
                call.extra["done"] = match
        return await self._complete_all()

    def _arguments(self, call: Call) -> object:
        done = call.extra.get("done")
        found = call_of(done if done else call.extra["item"])
        if not done and call.parts:
            return "".join(call.parts)
        return found[1] if found else None

    # --- leaving the queue ------------------------------------------------------------------

    def _release(self, entry: Entry, calls: list[Call]) -> list[bytes]:
        if any(c.blocked for c in calls):
            return []
        payload = entry.data
        if payload is not None and payload.get("type") in _FINAL and self.blocked:
            self._rewrite_output(_object(payload.get("response")))
            if isinstance(payload.get("sequence_number"), int):
                payload["sequence_number"] = self._next_seq(payload["sequence_number"])
            return [sse.encode(payload, entry.name)]
        if not self._renumber:  # nothing replaced yet: every event goes as it came
            seq = payload.get("sequence_number") if payload is not None else None
            self._last_seq = seq if isinstance(seq, int) else self._last_seq
            return [entry.raw]
        return [self._numbered(entry.raw)]

    def _rewrite_output(self, response: JSON) -> None:
        output = response.get("output")
        if not isinstance(output, list):
            return
        blocked = [c for c in self._calls.values() if c.blocked]
        for pos, item in enumerate(output):
            if not isinstance(item, dict) or item.get("type") not in _CALLS:
                continue
            for call in blocked:
                mine = call.extra["item"]
                same_id = item.get("id") is not None and item.get("id") == mine.get("id")
                if same_id or (item.get("call_id") and item.get("call_id") == call.call_id):
                    output[pos] = message_item(replacement_id(mine), self._text(call))
                    break

    def _next_seq(self, seq: int) -> int:
        if self._renumber and self._last_seq is not None:
            seq = self._last_seq + 1
        self._last_seq = seq
        return seq

    def _numbered(self, raw: bytes) -> bytes:
        m = _SEQ.search(raw)
        if m is None:
            return raw
        seq = int(m.group(1))
        new = self._next_seq(seq)
        return raw if new == seq else raw[: m.start(1)] + str(new).encode() + raw[m.end(1) :]

    @staticmethod
    def _text(call: Call) -> str:
        return call.judged.notice() if call.judged else f"nerve blocked the tool call {call.name}"

    def _replacement(self, call: Call, entry: Entry) -> list[bytes]:
        first = entry.data or {}
        seq = first.get("sequence_number")
        if self._renumber and self._last_seq is not None:
            seq = self._last_seq + 1
        index = first.get("output_index", 0)
        item_id = replacement_id(call.extra["item"])
        text = self._text(call)
        where = {"item_id": item_id, "output_index": index, "content_index": 0}
        part = {"type": "output_text", "text": "", "annotations": []}
        added = {"type": "message", "id": item_id, "role": "assistant", "status": "in_progress",
                 "content": []}  # fmt: skip
        events: list[tuple[str, JSON]] = [
            ("response.output_item.added", {"output_index": index, "item": added}),
            ("response.content_part.added", {**where, "part": part}),
            ("response.output_text.delta", {**where, "delta": text, "logprobs": []}),
            ("response.output_text.done", {**where, "text": text, "logprobs": []}),
            ("response.content_part.done", {**where, "part": {**part, "text": text}}),
            ("response.output_item.done", {"output_index": index,
                                           "item": message_item(item_id, text)}),
        ]  # fmt: skip
        out = []
        for kind, fields in events:
            numbered = {"sequence_number": seq} if isinstance(seq, int) else {}
            out.append(sse.encode({"type": kind, **numbered, **fields}, kind))
            if isinstance(seq, int):
                self._last_seq = seq
                seq += 1
        self._renumber = self._every = True  # every event is renumbered from here on
        return out

    def _error_event(self, message: str) -> bytes:
        seq = self._last_seq + 1 if self._last_seq is not None else 0
        error = {"type": "error", "sequence_number": seq, "code": "server_error",
                 "message": message, "param": None}  # fmt: skip
        return sse.encode(error, "error")
