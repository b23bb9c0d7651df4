"""OpenAI chat completions -> Anthropic Messages: the answer, and the stream as SSE events.

Also what both answer shapes share: stop reasons, usage, ids and Anthropic's error bodies.
Pure: no I/O. Import from `messages_wire`, which re-exports everything public here.
"""

from __future__ import annotations

import uuid
from typing import Any

import orjson

from nerve.errors import UpstreamError
from nerve.gateway.dialects.tokens import estimate_tokens

__all__ = [
    "PING",
    "STOP_REASONS",
    "MessagesStream",
    "anthropic_usage",
    "chat_to_message",
    "error_body",
    "error_type",
    "stop_reason",
]

PING = b'event: ping\ndata: {"type": "ping"}\n\n'

# OpenAI finish_reason -> Anthropic stop_reason; a reason added later reads as end_turn.
STOP_REASONS: dict[str, str] = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "refusal",
}
# The error types the Anthropic SDK knows (anthropic.types.shared.ErrorType); other 4xx read as
# invalid_request_error, other 5xx as api_error. 413 is invalid_request_error there too.
_ERROR_TYPES: dict[int, str] = {
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    429: "rate_limit_error",
    504: "timeout_error",
    529: "overloaded_error",
}
_TEXT = ("text", None)  # the stream's key for a text block

Block = dict[str, Any]


def error_type(status: int) -> str:
    return _ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")


def error_body(status: int, message: str) -> bytes:
    """Anthropic's error JSON: {"type": "error", "error": {"type", "message"}}."""
    return orjson.dumps(
        {"type": "error", "error": {"type": error_type(status), "message": message}}
    )


def chat_to_message(completion: dict[str, Any], model: str) -> dict[str, Any]:
    """An OpenAI chat.completion as an Anthropic message from `model`."""
    choices = completion.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices else None
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(choice, dict) or not isinstance(message, dict):
        raise UpstreamError("the answer has no choices[0].message", code="upstream_bad_json")
    content: list[Block] = []
    text = message.get("content")
    if isinstance(text, list):  # some servers answer in parts
        text = "".join(p.get("text") or "" for p in text if isinstance(p, dict))
    if not text and isinstance(message.get("refusal"), str):
        text = message["refusal"]
    if isinstance(text, str) and text:
        content.append({"type": "text", "text": text})
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list):
        raise UpstreamError("the answer's tool_calls is not a list", code="upstream_bad_json")
    if isinstance(message.get("function_call"), dict):  # the legacy single call
        calls = [*calls, {"function": message["function_call"]}]
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            raise UpstreamError("a tool call has no function", code="upstream_bad_json")
        content.append(
            {
                "type": "tool_use",
                "id": call.get("id") or _id("toolu_"),
                "name": function.get("name") or "",
                "input": _tool_input(function.get("arguments")),
            }
        )
    tools = any(block["type"] == "tool_use" for block in content)
    return {
        "id": _message_id(completion.get("id")),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason(choice.get("finish_reason"), tools=tools),
        "stop_sequence": None,
        "usage": anthropic_usage(completion.get("usage")),
    }


def _tool_input(arguments: Any) -> dict[str, Any]:
    """Tool call arguments (a JSON string) as the object Anthropic carries in `input`."""
    if isinstance(arguments, dict):
        return arguments
    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        return {}  # a tool that takes no arguments
    try:
        value = orjson.loads(arguments) if isinstance(arguments, str) else None
    except orjson.JSONDecodeError:
        value = None
    if not isinstance(value, dict):
        raise UpstreamError(
            f"a tool call's arguments are not a JSON object: {str(arguments)[:200]}",
            code="upstream_bad_json",
        )
    return value


def stop_reason(finish_reason: Any, *, tools: bool) -> str:
    """Some servers (Ollama, some vLLM parsers) finish a tool call with "stop"."""
    reason = STOP_REASONS.get(finish_reason, "end_turn") if isinstance(finish_reason, str) else None
    if tools and reason in (None, "end_turn"):
        return "tool_use"
    return reason or "end_turn"


def anthropic_usage(usage: Any) -> dict[str, int]:
    """OpenAI usage -> Anthropic's, whose input_tokens leaves out the cache reads."""
    usage = usage if isinstance(usage, dict) else {}
    details = usage.get("prompt_tokens_details")
    cached = _count(details.get("cached_tokens")) if isinstance(details, dict) else 0
    prompt = _count(usage.get("prompt_tokens"))
    out = {
        "input_tokens": max(0, prompt - cached),
        "output_tokens": _count(usage.get("completion_tokens")),
    }
    if cached:
        out["cache_read_input_tokens"] = cached
    return out


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _id(prefix: str) -> str:
    return prefix + uuid.uuid4().hex[:24]


def _message_id(upstream_id: Any) -> str:
    if isinstance(upstream_id, str) and upstream_id:
        return upstream_id if upstream_id.startswith("msg_") else f"msg_{upstream_id}"
    return _id("msg_")


def _event(kind: str, payload: dict[str, Any]) -> bytes:
    data = orjson.dumps({"type": kind, **payload})
    return b"event: " + kind.encode() + b"\ndata: " + data + b"\n\n"


class MessagesStream:
    """Feed it each OpenAI chunk in order, then `finish` at [DONE]; it returns the Messages
    events to send. A block opens and closes as the kind of delta changes: text is one block
    until a tool call starts, each tool call (by its index) its own. Usage is the upstream's
    when it sends a usage chunk, else the estimates (the input one given, the output counted)."""

    def __init__(self, model: str, *, input_tokens: int) -> None:
        self.model = model
        self.input_tokens = input_tokens
        self._started = self._finished = False
        self._index = -1  # the Anthropic index of the last block opened
        self._open: tuple[str, Any] | None = None  # _TEXT, or ("tool", the call's index)
        self._calls: list[tuple[str, Any]] = []  # tool call keys in the order they opened
        self._finish_reason: Any = None
        self._usage: dict[str, Any] | None = None
        self._output: list[str] = []  # what was streamed, for the output estimate

    @property
    def usage(self) -> dict[str, int] | None:
        """OpenAI-shaped usage, once the upstream sent it."""
        if self._usage is None:
            return None
        prompt = _count(self._usage.get("prompt_tokens"))
        completion = _count(self._usage.get("completion_tokens"))
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }

    def feed(self, chunk: dict[str, Any]) -> list[bytes]:
        if self._finished:
            return []
        error = chunk.get("error")
        if isinstance(error, dict) and not chunk.get("choices"):  # an error sent in-stream
            message = str(error.get("message") or error)[:500]
            raise UpstreamError(
                f"the upstream stream failed: {message}", code="upstream_stream_error"
            )
        out = self._start(chunk)
        if isinstance(chunk.get("usage"), dict):  # on the last chunk, or on every one
            self._usage = chunk["usage"]
        choices = chunk.get("choices")
        for choice in choices if isinstance(choices, list) else ():
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta")
            if isinstance(delta, dict):
                out += self._delta(delta)
            if choice.get("finish_reason"):
                self._finish_reason = choice["finish_reason"]
        return out

    def finish(self) -> list[bytes]:
        if self._finished:
            return []
        self._finished = True
        out = [*self._start({}), *self._close()]
        if self._usage is not None:
            usage = anthropic_usage(self._usage)
        else:
            output = estimate_tokens("".join(self._output))
            usage = {"input_tokens": self.input_tokens, "output_tokens": output}
        delta = {
            "stop_reason": stop_reason(self._finish_reason, tools=bool(self._calls)),
            "stop_sequence": None,
        }
        out.append(_event("message_delta", {"delta": delta, "usage": usage}))
        out.append(_event("message_stop", {}))
        return out

    def error(self, message: str, kind: str = "api_error") -> bytes:
        return _event("error", {"error": {"type": kind, "message": message}})

    def _start(self, chunk: dict[str, Any]) -> list[bytes]:
        if self._started:
            return []
        self._started = True
        message: Block = {
            "id": _message_id(chunk.get("id")),
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": self.input_tokens, "output_tokens": 1},  # as Anthropic's
        }
        return [_event("message_start", {"message": message})]

    def _delta(self, delta: dict[str, Any]) -> list[bytes]:
        out: list[bytes] = []
        text = delta.get("content")
        if isinstance(text, str) and text:
            if self._open != _TEXT:
                out += self._open_block(_TEXT, {"type": "text", "text": ""})
            out.append(self._block_delta({"type": "text_delta", "text": text}))
            self._output.append(text)
        calls = delta.get("tool_calls")
        for call in calls if isinstance(calls, list) else ():
            if isinstance(call, dict):
                out += self._tool_call(call)
        return out  # reasoning_content is not passed on: see the module docstring

    def _tool_call(self, call: dict[str, Any]) -> list[bytes]:
        function = call.get("function")
        if not isinstance(function, dict):
            function = {}
        index = call.get("index")
        if isinstance(index, int):
            key: tuple[str, Any] = ("tool", index)
        elif call.get("id"):  # some servers leave out the index: an id starts a call
            key = ("tool", call["id"])
        else:
            key = self._calls[-1] if self._calls else ("tool", 0)
        out: list[bytes] = []
        if key != self._open:
            if key in self._calls:
                # Its block is closed; Anthropic has no way to add to it.
                raise UpstreamError(
                    "the upstream interleaved tool call arguments", code="upstream_bad_stream"
                )
            self._calls.append(key)
            block: Block = {
                "type": "tool_use",
                "id": call.get("id") or _id("toolu_"),
                "name": function.get("name") or "",
                "input": {},
            }
            out += self._open_block(key, block)
        arguments = function.get("arguments")
        if isinstance(arguments, str) and arguments:
            out.append(self._block_delta({"type": "input_json_delta", "partial_json": arguments}))
            self._output.append(arguments)
        return out

    def _open_block(self, key: tuple[str, Any], block: Block) -> list[bytes]:
        out = self._close()
        self._index += 1
        self._open = key
        return [*out, _event("content_block_start", {"index": self._index, "content_block": block})]

    def _block_delta(self, delta: Block) -> bytes:
        return _event("content_block_delta", {"index": self._index, "delta": delta})

    def _close(self) -> list[bytes]:
        if self._open is None:
            return []
        self._open = None
        return [_event("content_block_stop", {"index": self._index})]
