"""The stream guard for OpenAI chat completions: `data: {chunk}` events, then `data: [DONE]`.

A chat stream never says a tool call is complete, so a call is taken as complete when the
next call of its choice starts, when text follows it, at the choice's finish_reason, or at
[DONE] (sequential calls, as every server sends them; a fragment for a call already judged
is refused as a guard failure rather than let through unjudged). A blocked call's fragments
are dropped from their chunks (a chunk left with nothing is dropped), the calls after it are
renumbered so the client's list has no gap, and a content delta with the notice follows where
the call began; a finish_reason tool_calls with no call left becomes stop.
"""

from __future__ import annotations

import re
from typing import Any

from nerve.gateway.guard import sse
from nerve.gateway.guard.stream import Call, Entry, GuardError, GuardStream

__all__ = ["ChatStream"]

JSON = dict[str, Any]
_TOOL_FINISH = ("tool_calls", "function_call")
_TEXT = re.compile(rb'"(?:content|refusal)"\s*:\s*"[^"]')


def _objects(value: Any) -> list[JSON]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _object(value: Any) -> JSON:
    return value if isinstance(value, dict) else {}


def _choice_index(choice: JSON) -> int:
    index = choice.get("index", 0)
    return index if isinstance(index, int) else 0


class ChatStream(GuardStream):
    mark = (b"_call",)  # "tool_calls", "function_call"
    tail = (b"[DONE]",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._texted = False  # text was streamed: a notice starts a paragraph of its own
        self._alias: dict[tuple[int, int], Any] = {}  # (choice, index) -> the key of its call

    def _glance(self, data: bytes) -> None:
        if not self._texted and _TEXT.search(data):
            self._texted = True

    async def _event(self, event: bytes) -> list[bytes]:
        _, data = sse.fields(event)
        if data is None:
            return self._emit(Entry(event))  # a comment or keep-alive: in its place
        if data.strip() == b"[DONE]":
            out = await self._complete_all()
            return out + self._note() + self._emit(Entry(event))
        chunk = sse.load(data)
        if chunk is None:
            return self._emit(Entry(event))
        owners: list[Any] = []
        closing: list[Call] = []
        for choice in _objects(chunk.get("choices")):
            c = _choice_index(choice)
            delta = _object(choice.get("delta"))
            if any(isinstance(delta.get(k), str) and delta[k] for k in ("content", "refusal")):
                self._texted = True
                closing += self._open_in(c)
            for call in _objects(delta.get("tool_calls")):
                owners.append(self._fragment(c, call, closing))
            if isinstance(delta.get("function_call"), dict):  # the legacy single call
                legacy = {"id": None, "index": None, "function": delta["function_call"]}
                owners.append(self._fragment(c, legacy, closing, key=(c, "function_call")))
            if choice.get("finish_reason"):
                closing += self._open_in(c)
        # The owners are the fragments' calls in the order of the fragments: _release walks
        # the chunk in that same order to tell which fragment is whose.
        out = self._emit(Entry(event, tuple(owners), chunk))
        for state in dict.fromkeys(closing):
            out += await self._complete(state, "".join(state.parts))
        return out

    def _open_in(self, choice: int) -> list[Call]:
        return [c for c in self._open.values() if c.extra["choice"] == choice]

    def _fragment(self, c: int, call: JSON, closing: list[Call], key: Any = None) -> Any:
        """Add one tool call fragment; returns the call's key."""
        fn = _object(call.get("function"))
        index = call.get("index")
        call_id = call.get("id") if isinstance(call.get("id"), str) and call.get("id") else None
        if key is None:
            if isinstance(index, int):
                key = self._alias.get((c, index), (c, index))
                known = self._calls.get(key)
                if known and call_id and known.call_id and call_id != known.call_id:
                    key = (c, index, call_id)  # some servers number every call 0: a new id
                    self._alias[(c, index)] = key  # is a new call, and the index is now its
            elif call_id is not None:  # some servers leave the index out: an id starts a call
                key = (c, call_id)
            else:
                key = next(reversed([k for k, v in self._open.items() if v.extra["choice"] == c]),
                           (c, 0))  # fmt: skip
        state = self._calls.get(key)
        if state is None:
            closing += self._open_in(c)  # a new call: the ones before it are complete
            name = fn["name"] if isinstance(fn.get("name"), str) else ""
            extra = {"choice": c, "index": index if isinstance(index, int) else None}
            state = self._begin(Call(key, name, call_id, extra=extra))
        elif state.done:
            raise GuardError(f"tool call {state.name!r} continued after it was judged")
        elif not state.name and isinstance(fn.get("name"), str):
            state.name = fn["name"]
        if isinstance(fn.get("arguments"), str):
            state.parts.append(fn["arguments"])
        return key

    # --- leaving the queue ------------------------------------------------------------------

    def _shift(self, call: Call) -> int:
        """How many blocked calls of the same choice came before this one."""
        index = call.extra["index"]
        if index is None:
            return 0
        return sum(
            1
            for other in self._calls.values()
            if other.blocked and other.extra["choice"] == call.extra["choice"]
            and isinstance(other.extra["index"], int) and other.extra["index"] < index
        )  # fmt: skip

    def _stops(self, choice: JSON) -> bool:
        """Whether this choice's finish_reason must become stop: it said tool calls, and every
        one of its calls was blocked."""
        if choice.get("finish_reason") not in _TOOL_FINISH:
            return False
        c = _choice_index(choice)
        calls = [k for k in self._calls.values() if k.extra["choice"] == c]
        return bool(calls) and all(k.blocked for k in calls)

    def _release(self, entry: Entry, calls: list[Call]) -> list[bytes]:
        chunk = entry.data
        if chunk is None or not self.blocked:  # nothing blocked: nothing to renumber or stop
            return [entry.raw]
        choices = _objects(chunk.get("choices"))
        if not (any(c.blocked or self._shift(c) for c in calls) or any(map(self._stops, choices))):
            return [entry.raw]
        owners = iter(entry.owners)
        for choice in choices:
            delta = _object(choice.get("delta"))
            if "tool_calls" in delta:
                kept = [
                    self._renumbered(fragment, self._calls[next(owners)])
                    for fragment in _objects(delta.get("tool_calls"))
                ]
                if any(k is not None for k in kept):
                    delta["tool_calls"] = [k for k in kept if k is not None]
                else:
                    del delta["tool_calls"]
            if isinstance(delta.get("function_call"), dict) and self._calls[next(owners)].blocked:
                del delta["function_call"]
            if self._stops(choice):
                choice["finish_reason"] = "stop"
        empty = all(
            all(v is None for v in _object(choice.get("delta")).values())
            and not choice.get("finish_reason")
            for choice in choices
        )
        if calls and empty and not chunk.get("usage"):
            return []  # it carried nothing but blocked fragments
        return [sse.encode(chunk)]

    def _renumbered(self, fragment: JSON, call: Call) -> JSON | None:
        """A fragment as it goes out: None with its call blocked, else with the index the
        call has once the blocked calls before it are gone."""
        if call.blocked:
            return None
        shift = self._shift(call)
        return {**fragment, "index": call.extra["index"] - shift} if shift else fragment

    def _replacement(self, call: Call, entry: Entry) -> list[bytes]:
        c = call.extra["choice"]
        text = call.judged.notice() if call.judged else f"nerve blocked the tool call {call.name}"
        if self._texted:
            text = "\n\n" + text
        self._texted = True
        base = {k: v for k, v in (entry.data or {}).items() if k not in ("choices", "usage")}
        if entry.data and "usage" in entry.data:
            base["usage"] = None  # include_usage streams carry it on every chunk
        choice = {"index": c, "delta": {"content": text}, "logprobs": None, "finish_reason": None}
        return [sse.encode({**base, "choices": [choice]})]

    def _error_event(self, message: str) -> bytes:
        error = {"message": message, "type": "server_error", "code": "guard_error"}
        return sse.encode({"error": error})
