"""chat.completion.chunk dicts -> OpenAI Responses SSE events (SPEC GW-21). Pure: no I/O.

    response.created, response.in_progress                         at the first chunk
    reasoning (`reasoning_content` or `reasoning` deltas):
        output_item.added, reasoning_summary_part.added, reasoning_summary_text.delta...,
        reasoning_summary_text.done, reasoning_summary_part.done, output_item.done
    message (`content`, `refusal` deltas):
        output_item.added, content_part.added, output_text.delta (refusal.delta)...,
        output_text.done (refusal.done), content_part.done, output_item.done
    function_call: output_item.added, function_call_arguments.delta..., .done, output_item.done
    custom_tool_call (whole, once the call's arguments are complete): output_item.added,
        custom_tool_call_input.delta, custom_tool_call_input.done, output_item.done
    local_shell_call (whole, likewise): output_item.added, output_item.done
    response.completed | response.incomplete (out of tokens), or response.failed

Every event carries a `sequence_number` from 0. A custom tool's model streams JSON arguments
({"input": "..."}), so its input is sent once decoded rather than as it arrives.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import orjson

from nerve.errors import UpstreamError
from nerve.gateway.dialects.responses_answer import (
    INCOMPLETE,
    as_list,
    as_object,
    call_item,
    declared_tools,
    message_item,
    new_id,
    part,
    reasoning_of,
    response_object,
    usage_from_chat,
)

__all__ = ["ERROR_CODES", "ResponsesStream"]

# The Response error codes clients know (the SDK's ResponseError.code) that nerve can mean;
# any other is sent as server_error, its text kept in the message.
ERROR_CODES = frozenset({"server_error", "rate_limit_exceeded", "invalid_prompt"})
Item = dict[str, Any]

# Per part kind: the event that opens it, its delta, the event ending its text and the field
# carrying the text there, the event ending the part, and the key of the part's index.
_EVENTS = {
    "output_text": ("response.content_part.added", "response.output_text.delta",
                    "response.output_text.done", "text", "response.content_part.done",
                    "content_index"),
    "refusal": ("response.content_part.added", "response.refusal.delta",
                "response.refusal.done", "refusal", "response.content_part.done",
                "content_index"),
    "summary_text": ("response.reasoning_summary_part.added",
                     "response.reasoning_summary_text.delta",
                     "response.reasoning_summary_text.done", "text",
                     "response.reasoning_summary_part.done", "summary_index"),
}  # fmt: skip


@dataclass(slots=True)
class _Text:
    """The reasoning or message item being streamed: its parts as [kind, text] pairs."""

    kind: str  # reasoning | message
    index: int
    id: str
    parts: list[list[str]] = field(default_factory=list)
    part_open: bool = False


@dataclass(slots=True)
class _Call:
    index: int
    id: str
    call_id: str
    name: str
    streamed: bool  # a function call streams its arguments; custom and local_shell calls wait
    arguments: list[str] = field(default_factory=list)


class ResponsesStream:
    """Feed it each chat.completion.chunk in order, then `finish` at [DONE]; it returns the
    Responses SSE frames to send. Tool calls stay open until text or reasoning starts again or
    the stream ends, so the argument deltas of parallel calls may interleave."""

    def __init__(self, body: dict[str, Any], model: str) -> None:
        self.body = body
        self.model = model
        self.id = new_id("resp")
        self.created = int(time.time())
        self._tools = declared_tools(body)
        self._seq = 0
        self._started = self._ended = False
        self._output: dict[int, Item] = {}  # finished items by output index
        self._count = 0  # output indexes given out
        self._text: _Text | None = None
        self._calls: dict[int, _Call] = {}  # open calls by their chat tool_calls index
        self._closed: set[int] = set()  # chat indexes of calls already done
        self._finish: str | None = None
        self._usage: dict[str, Any] | None = None

    @property
    def usage(self) -> dict[str, int] | None:
        """The upstream's usage (chat-shaped), once its usage chunk came."""
        counts = usage_from_chat(self._usage)
        if counts is None:
            return None
        return {"prompt_tokens": counts["input_tokens"],
                "completion_tokens": counts["output_tokens"],
                "total_tokens": counts["total_tokens"]}  # fmt: skip

    def feed(self, chunk: dict[str, Any]) -> list[bytes]:
        out = self._start()
        if isinstance(chunk.get("usage"), dict):
            self._usage = chunk["usage"]
        for choice in as_list(chunk.get("choices")):
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = as_object(choice.get("delta"))
            if thought := reasoning_of(delta):
                out += self._piece("reasoning", "summary_text", thought)
            for kind, key in (("output_text", "content"), ("refusal", "refusal")):
                if isinstance(piece := delta.get(key), str) and piece:
                    out += self._piece("message", kind, piece)
            for call in as_list(delta.get("tool_calls")):
                if isinstance(call, dict):
                    out += self._call(call)
            if isinstance(choice.get("finish_reason"), str):
                self._finish = choice["finish_reason"]
        return out

    def finish(self) -> list[bytes]:
        """At [DONE]: close what is open, then response.completed (or response.incomplete)."""
        if self._ended:
            return []
        out = [*self._start(), *self._close_text(), *self._close_calls()]
        self._ended = True
        incomplete = INCOMPLETE.get(self._finish or "")
        status = "incomplete" if incomplete else "completed"
        response = self._response(status, incomplete=incomplete)
        return [*out, self._event(f"response.{status}", {"response": response})]

    def failed(self, message: str, code: str = "server_error") -> bytes:
        """A response.failed event holding the items finished so far (after response.created,
        if the stream had not started)."""
        out = self._start()
        self._ended = True
        error = {"code": code if code in ERROR_CODES else "server_error", "message": message}
        response = self._response("failed", error=error)
        return b"".join([*out, self._event("response.failed", {"response": response})])

    def _start(self) -> list[bytes]:
        if self._started:
            return []
        self._started = True
        response = self._response("in_progress")
        return [self._event("response.created", {"response": response}),
                self._event("response.in_progress", {"response": response})]  # fmt: skip

    def _response(self, status: str, **extra: Any) -> dict[str, Any]:
        output = [self._output[i] for i in sorted(self._output)]
        usage = None if status == "in_progress" else usage_from_chat(self._usage)
        return response_object(self.body, self.id, self.model, self.created, status, output,
                               usage, **extra)  # fmt: skip

    # --- reasoning and message items --------------------------------------------------------

    def _piece(self, item_kind: str, kind: str, piece: str) -> list[bytes]:
        out = self._close_calls()
        current = self._text
        if current is None or current.kind != item_kind:
            out += self._close_text()
            current = self._text = _Text(item_kind, self._next(), new_id(_PREFIX[item_kind]))
            if item_kind == "reasoning":
                item: Item = {"type": "reasoning", "id": current.id, "summary": []}
            else:
                item = message_item(current.id, [], "in_progress")
            out.append(self._event("response.output_item.added",
                                   {"output_index": current.index, "item": item}))  # fmt: skip
        if not current.part_open or current.parts[-1][0] != kind:
            out += self._close_part(current)
            current.parts.append([kind, ""])
            current.part_open = True
            added, *_, key = _EVENTS[kind]
            out.append(self._event(added, {**self._where(current), key: len(current.parts) - 1,
                                           "part": part(kind, "")}))  # fmt: skip
        current.parts[-1][1] += piece
        _, delta, *_, key = _EVENTS[kind]
        logprobs: dict[str, Any] = {"logprobs": []} if kind == "output_text" else {}
        out.append(self._event(delta, {**self._where(current), key: len(current.parts) - 1,
                                       "delta": piece, **logprobs}))  # fmt: skip
        return out

    def _close_part(self, current: _Text) -> list[bytes]:
        if not current.part_open:
            return []
        current.part_open = False
        kind, text = current.parts[-1]
        _, _, text_done, text_key, part_done, key = _EVENTS[kind]
        where = {**self._where(current), key: len(current.parts) - 1}
        logprobs: dict[str, Any] = {"logprobs": []} if kind == "output_text" else {}
        return [self._event(text_done, {**where, text_key: text, **logprobs}),
                self._event(part_done, {**where, "part": part(kind, text)})]  # fmt: skip

    def _close_text(self) -> list[bytes]:
        current, self._text = self._text, None
        if current is None:
            return []
        out = self._close_part(current)
        parts = [part(kind, text) for kind, text in current.parts]
        if current.kind == "reasoning":
            item: Item = {"type": "reasoning", "id": current.id, "summary": parts}
        else:
            status = "incomplete" if self._finish in INCOMPLETE else "completed"
            item = message_item(current.id, parts, status)
        return [*out, self._done(current.index, item)]

    # --- tool calls -------------------------------------------------------------------------

    def _call(self, call: dict[str, Any]) -> list[bytes]:
        out: list[bytes] = []
        position = call["index"] if isinstance(call.get("index"), int) else 0
        function = as_object(call.get("function"))
        call_id = call.get("id") if isinstance(call.get("id"), str) and call.get("id") else None
        state = self._calls.get(position)
        # A new id at an open index is another call: some servers number every call 0.
        if state is None or (call_id is not None and call_id != state.call_id):
            if state is None and call_id is None and position in self._closed:
                raise UpstreamError("a streamed tool call continued after it was closed",
                                    code="upstream_bad_stream")  # fmt: skip
            out += self._close_text()
            if state is not None:
                out += self._close_calls()
            name = str(function.get("name") or "")
            tool = self._tools.get(name)
            streamed = tool is None or tool.kind == "function"
            state = _Call(self._next(), new_id("fc" if streamed else "ctc"),
                          call_id or new_id("call"), name, streamed)  # fmt: skip
            self._calls[position] = state
            if streamed:
                item = {**call_item(self._tools, state.call_id, name, ""), "id": state.id,
                        "status": "in_progress"}  # fmt: skip
                out.append(self._event("response.output_item.added",
                                       {"output_index": state.index, "item": item}))  # fmt: skip
        if isinstance(fragment := function.get("arguments"), str) and fragment:
            state.arguments.append(fragment)
            if state.streamed:
                out.append(self._event("response.function_call_arguments.delta",
                                       {**self._where(state), "delta": fragment}))  # fmt: skip
        return out

    def _close_calls(self) -> list[bytes]:
        calls = sorted(self._calls.items(), key=lambda pair: pair[1].index)
        self._calls = {}
        out: list[bytes] = []
        for position, state in calls:
            self._closed.add(position)
            arguments = "".join(state.arguments)
            item = {**call_item(self._tools, state.call_id, state.name, arguments),
                    "id": state.id}  # fmt: skip
            if not state.streamed:
                out += self._whole(state, item)
            if item["type"] == "function_call":
                out.append(self._event("response.function_call_arguments.done",
                                       {**self._where(state), "arguments": arguments}))  # fmt: skip
            out.append(self._done(state.index, item))
        return out

    def _whole(self, state: _Call, item: Item) -> list[bytes]:
        """A custom or local_shell call, sent now its arguments are complete."""
        where = self._where(state)
        kind = item["type"]
        empty = {"custom_tool_call": {"input": ""}, "function_call": {"arguments": ""}}
        added = {**item, **empty.get(kind, {})}
        if "status" in added:
            added["status"] = "in_progress"
        out = [self._event("response.output_item.added",
                           {"output_index": state.index, "item": added})]  # fmt: skip
        if kind == "custom_tool_call":
            if item["input"]:
                out.append(self._event("response.custom_tool_call_input.delta",
                                       {**where, "delta": item["input"]}))  # fmt: skip
            out.append(self._event("response.custom_tool_call_input.done",
                                   {**where, "input": item["input"]}))  # fmt: skip
        elif kind == "function_call" and item["arguments"]:  # arguments that were no shell action
            out.append(self._event("response.function_call_arguments.delta",
                                   {**where, "delta": item["arguments"]}))  # fmt: skip
        return out

    # --- framing ----------------------------------------------------------------------------

    def _next(self) -> int:
        self._count += 1
        return self._count - 1

    def _done(self, index: int, item: Item) -> bytes:
        self._output[index] = item
        return self._event("response.output_item.done", {"output_index": index, "item": item})

    @staticmethod
    def _where(state: _Text | _Call) -> dict[str, Any]:
        return {"item_id": state.id, "output_index": state.index}

    def _event(self, kind: str, fields: dict[str, Any]) -> bytes:
        data = orjson.dumps({"type": kind, "sequence_number": self._seq, **fields})
        self._seq += 1
        return b"event: " + kind.encode() + b"\ndata: " + data + b"\n\n"


_PREFIX = {"reasoning": "rs", "message": "msg"}
