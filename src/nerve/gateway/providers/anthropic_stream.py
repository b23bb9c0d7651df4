"""Anthropic Messages stream events -> OpenAI `chat.completion.chunk` dicts (SPEC GW-2, GW-10).

Also the small pieces both answer directions share: stop reasons, usage and error messages.
Pure: no I/O. Import from `anthropic_wire`, which re-exports everything public here.
"""

from __future__ import annotations

import json
import time
from typing import Any

from nerve.errors import UpstreamError

__all__ = [
    "FINISH_REASONS",
    "StreamTranslator",
    "anthropic_error_message",
    "dump_arguments",
    "finish_reason",
    "openai_usage",
]

# Anthropic stop_reason -> OpenAI finish_reason; a reason added later reads as "stop".
FINISH_REASONS: dict[str, str] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}


def finish_reason(stop_reason: Any) -> str | None:
    if stop_reason is None:
        return None
    return FINISH_REASONS.get(stop_reason, "stop") if isinstance(stop_reason, str) else "stop"


def openai_usage(usage: dict[str, Any]) -> dict[str, int]:
    """Anthropic usage -> OpenAI usage. Cached input is still input, so it counts as prompt."""

    def count(key: str) -> int:
        value = usage.get(key)
        return value if isinstance(value, int) else 0

    prompt = (
        count("input_tokens")
        + count("cache_creation_input_tokens")
        + count("cache_read_input_tokens")
    )
    completion = count("output_tokens")
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def dump_arguments(value: Any) -> str:
    """A tool_use `input` as OpenAI `arguments`: compact JSON, non-ASCII kept as is."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def anthropic_error_message(resp: dict[str, Any]) -> str:
    """{"type": "error", "error": {"type", "message"}} -> "type: message"."""
    err = resp.get("error")
    if not isinstance(err, dict):
        return str(err or resp)[:500]
    kind, message = err.get("type"), err.get("message")
    if kind and message:
        return f"{kind}: {message}"
    return str(message or kind or "unknown error")


class StreamTranslator:
    """Feed it each Anthropic SSE event in order; it returns the OpenAI chunks to send.

    Tool use blocks become `tool_calls` deltas numbered 0, 1, ... in the order they start,
    whatever their Anthropic block index. `usage` is known from `message_start` onwards.
    """

    def __init__(self, model: str, *, include_usage: bool) -> None:
        self.model = model
        self.include_usage = include_usage
        self.id = "chatcmpl-anthropic"  # replaced by the message id at message_start
        self.created = int(time.time())
        self._counts: dict[str, Any] | None = None
        self._tools: dict[int, int] = {}  # Anthropic block index -> OpenAI tool call index
        self._tool_inputs: dict[int, Any] = {}  # block index -> input, until arguments stream
        self._finished = False

    @property
    def usage(self) -> dict[str, int] | None:
        return None if self._counts is None else openai_usage(self._counts)

    def feed(self, event: str, data: dict[str, Any]) -> list[dict[str, Any]]:
        kind = event or data.get("type")
        if kind == "content_block_delta":
            return self._delta(data.get("index"), data.get("delta") or {})
        if kind == "content_block_start":
            return self._start(data.get("index"), data.get("content_block") or {})
        if kind == "content_block_stop":
            return self._stop(data.get("index"))
        if kind == "message_start":
            message = data.get("message") or {}
            if isinstance(message.get("id"), str):
                self.id = message["id"]
            self._counts = dict(message.get("usage") or {})
            return [self._chunk({"role": "assistant", "content": ""})]
        if kind == "message_delta":
            return self._message_delta(data)
        if kind == "message_stop":
            return self._message_stop()
        if kind == "error":
            raise UpstreamError(anthropic_error_message(data), code="upstream_stream_error")
        return []  # ping, and event types added after this was written

    def _start(self, index: Any, block: dict[str, Any]) -> list[dict[str, Any]]:
        kind = block.get("type")
        if kind == "text" and block.get("text"):
            return [self._chunk({"content": block["text"]})]
        if kind != "tool_use" or not isinstance(index, int):
            return []  # thinking starts empty; server tools are not the client's to call
        position = self._tools[index] = len(self._tools)
        self._tool_inputs[index] = block.get("input") or {}
        call = {
            "index": position,
            "id": block.get("id"),
            "type": "function",
            "function": {"name": block.get("name"), "arguments": ""},
        }
        return [self._chunk({"tool_calls": [call]})]

    def _delta(self, index: Any, delta: dict[str, Any]) -> list[dict[str, Any]]:
        kind = delta.get("type")
        if kind == "text_delta" and delta.get("text"):
            return [self._chunk({"content": delta["text"]})]
        if kind == "thinking_delta" and delta.get("thinking"):
            return [self._chunk({"reasoning_content": delta["thinking"]})]
        if kind == "input_json_delta" and index in self._tools and delta.get("partial_json"):
            self._tool_inputs.pop(index, None)
            return [self._arguments(index, delta["partial_json"])]
        return []  # signature_delta, citations_delta, empty fragments

    def _stop(self, index: Any) -> list[dict[str, Any]]:
        # A tool without input may stream no JSON at all; clients expect parseable arguments.
        if index in self._tool_inputs:
            return [self._arguments(index, dump_arguments(self._tool_inputs.pop(index)))]
        return []

    def _message_delta(self, data: dict[str, Any]) -> list[dict[str, Any]]:
        usage = data.get("usage")
        if isinstance(usage, dict):
            # output_tokens is cumulative; newer servers also repeat the input counts here.
            counts = self._counts if self._counts is not None else {}
            counts.update({k: v for k, v in usage.items() if v is not None})
            self._counts = counts
        reason = finish_reason((data.get("delta") or {}).get("stop_reason"))
        if reason is None or self._finished:
            return []
        self._finished = True
        return [self._chunk({}, reason)]

    def _message_stop(self) -> list[dict[str, Any]]:
        chunks = [] if self._finished else [self._chunk({}, "stop")]
        self._finished = True
        if self.include_usage:
            final = self._chunk({})
            final["choices"] = []
            final["usage"] = self.usage or openai_usage({})
            chunks.append(final)
        return chunks

    def _arguments(self, index: int, fragment: str) -> dict[str, Any]:
        call = {"index": self._tools[index], "function": {"arguments": fragment}}
        return self._chunk({"tool_calls": [call]})

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        chunk: dict[str, Any] = {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        if self.include_usage:
            chunk["usage"] = None  # as OpenAI does: null on every chunk but the last
        return chunk
