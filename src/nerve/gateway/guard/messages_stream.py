"""The stream guard for Anthropic Messages: `event: X` / `data: {...}` events.

A tool_use block (content_block_start .. input_json_delta deltas .. content_block_stop) is held
from its start to its stop, then judged on its input. A blocked block is replaced, at the same
index, by a text block holding the notice (start, one text_delta, stop), and message_delta's
stop_reason tool_use becomes end_turn when no tool_use block is left. A ping in a held block
waits with it, so that the bytes are the same when nothing is blocked.
Server-side tool blocks (server_tool_use, mcp_tool_use) run at Anthropic, not at the client,
and are left alone.
"""

from __future__ import annotations

from typing import Any

from nerve.gateway.guard import sse
from nerve.gateway.guard.policy import lenient_loads
from nerve.gateway.guard.stream import Call, Entry, GuardError, GuardStream

__all__ = ["MessagesStream"]


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


class MessagesStream(GuardStream):
    mark = (b'"tool_use"',)
    tail = (b"message_delta", b"message_stop")
    late = (b'"input_json_delta"',)  # a delta after its block's stop must not slip by

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._tools = 0  # tool_use blocks seen

    async def _event(self, event: bytes) -> list[bytes]:
        name, data = sse.fields(event)
        kind = sse.event_type(name, data) if data is not None else None
        if data is None or kind == "ping":  # kept in its place, so the bytes stay the same
            return self._emit(Entry(event, name=name))
        if kind in ("message_delta", "message_stop"):
            out = await self._complete_all()  # a block the message ended without stopping
            if kind == "message_stop":
                out += self._note()
            payload = sse.load(data) if kind == "message_delta" else None
            return out + self._emit(Entry(event, (), payload, name))
        if kind not in ("content_block_start", "content_block_delta", "content_block_stop"):
            return self._emit(Entry(event, name=name))
        payload = sse.load(data)
        index = payload.get("index") if payload else None
        if payload is None or not isinstance(index, int):
            return self._emit(Entry(event, name=name))
        if kind == "content_block_start":
            block = _object(payload.get("content_block"))
            if block.get("type") != "tool_use":
                return self._emit(Entry(event, name=name))
            self._tools += 1
            call_id = block.get("id") if isinstance(block.get("id"), str) else None
            started = self._begin(Call(index, str(block.get("name") or ""), call_id))
            started.extra["input"] = block.get("input")  # a proxy may send it whole here
            return self._emit(Entry(event, (index,), payload, name))
        call = self._open.get(index)
        if call is None:
            if index in self._calls:  # a late delta would change the input clients keep
                raise GuardError(f"tool_use block {index} continued after it was judged")
            return self._emit(Entry(event, name=name))
        if kind == "content_block_delta":
            partial = _object(payload.get("delta")).get("partial_json")
            if isinstance(partial, str):
                call.parts.append(partial)
            return self._emit(Entry(event, (index,), payload, name))
        out = self._emit(Entry(event, (index,), payload, name))  # content_block_stop
        return out + await self._complete(call, self._arguments(call))

    def _arguments(self, call: Call) -> object:
        if call.parts:
            text = "".join(call.parts)
            parsed = lenient_loads(text)
            return parsed if isinstance(parsed, dict) else text
        start = call.extra.get("input")
        return start if isinstance(start, dict) else {}

    def _release(self, entry: Entry, calls: list[Call]) -> list[bytes]:
        if not self.blocked:
            return [entry.raw]
        if any(c.blocked for c in calls):
            return []
        payload = entry.data
        if entry.owners or payload is None or payload.get("type") != "message_delta":
            return [entry.raw]
        delta = _object(payload.get("delta"))
        blocked = sum(c.blocked for c in self._calls.values())
        if delta.get("stop_reason") != "tool_use" or not blocked or blocked < self._tools:
            return [entry.raw]
        delta["stop_reason"] = "end_turn"  # every tool call was blocked: the turn ends here
        return [sse.encode(payload, entry.name or "message_delta")]

    def _replacement(self, call: Call, entry: Entry) -> list[bytes]:
        text = call.judged.notice() if call.judged else f"nerve blocked the tool call {call.name}"
        index = call.key
        block = {"type": "text", "text": ""}
        return [
            _event("content_block_start", {"index": index, "content_block": block}),
            _event("content_block_delta",
                   {"index": index, "delta": {"type": "text_delta", "text": text}}),
            _event("content_block_stop", {"index": index}),
        ]  # fmt: skip

    def _error_event(self, message: str) -> bytes:
        return _event("error", {"error": {"type": "api_error", "message": message}})


def _event(kind: str, fields: dict[str, Any]) -> bytes:
    return sse.encode({"type": kind, **fields}, kind)
