"""What the GenAI semantic conventions read off a request and an answer (no opentelemetry here).

`request_attributes(payload, capture)`: the body as it goes upstream (any wire: chat, Messages,
Responses, embeddings, completions): its sampling parameters, and with `capture` the input as
`gen_ai.input.messages` (+ `gen_ai.system_instructions`), JSON in the conventions' message
shape: `[{"role", "parts": [{"type": "text", "content"}, ...]}]`. `answer_attributes(wire,
body, capture)`: a whole answer in the client's dialect: response id, model, finish reasons
and, with `capture`, `gen_ai.output.messages`. `FrameTap` reads the same off a stream's frames.
Text never leaves without `capture` (telemetry.capture_content).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import orjson

__all__ = ["OPERATIONS", "FrameTap", "answer_attributes", "request_attributes"]

Attributes = dict[str, Any]

# The client's dialect (its endpoint) → gen_ai.operation.name.
OPERATIONS = {"chat": "chat", "messages": "chat", "responses": "chat",
              "embeddings": "embeddings", "completions": "text_completion"}  # fmt: skip
_PARAMETERS = (
    ("max_tokens", "gen_ai.request.max_tokens"),
    ("max_completion_tokens", "gen_ai.request.max_tokens"),
    ("max_output_tokens", "gen_ai.request.max_tokens"),
    ("temperature", "gen_ai.request.temperature"),
    ("top_p", "gen_ai.request.top_p"),
    ("top_k", "gen_ai.request.top_k"),
    ("seed", "gen_ai.request.seed"),
    ("frequency_penalty", "gen_ai.request.frequency_penalty"),
    ("presence_penalty", "gen_ai.request.presence_penalty"),
)
_FINISH = re.compile(rb'"(?:finish_reason|stop_reason)":\s*"([^"]{1,64})"')
_MODEL = re.compile(rb'"model":\s*"([^"]{1,200})"')
_ID = re.compile(rb'"id":\s*"([^"]{1,200})"')


def request_attributes(payload: Mapping[str, Any], capture: bool) -> Attributes:
    out: Attributes = {}
    for field, key in _PARAMETERS:
        value = payload.get(field)
        if isinstance(value, int | float) and not isinstance(value, bool):
            out[key] = value
    if not capture:
        return out
    system = payload.get("system", payload.get("instructions"))
    if system:
        out["gen_ai.system_instructions"] = _json(_parts(system))
    messages = payload.get("messages", payload.get("input", payload.get("prompt")))
    if isinstance(messages, str):
        messages = [{"role": "user", "content": messages}]
    if isinstance(messages, list):
        out["gen_ai.input.messages"] = _json([_message(m) for m in messages])
    return out


def answer_attributes(wire: str, body: bytes, capture: bool) -> Attributes:
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        return {}
    if not isinstance(data, dict):
        return {}
    out: Attributes = {}
    for field, key in (("id", "gen_ai.response.id"), ("model", "gen_ai.response.model")):
        if isinstance(data.get(field), str):
            out[key] = data[field]
    if wire == "messages":  # Anthropic: one stop_reason, the content blocks
        reasons = [data["stop_reason"]] if isinstance(data.get("stop_reason"), str) else []
        outputs = [{"role": "assistant", "content": data.get("content")}]
    elif wire == "responses":
        reasons = [data["status"]] if isinstance(data.get("status"), str) else []
        outputs = [o for o in data.get("output") or () if isinstance(o, dict)]
    else:  # chat completions and completions: choices
        choices = [c for c in data.get("choices") or () if isinstance(c, dict)]
        reasons = [c["finish_reason"] for c in choices if isinstance(c.get("finish_reason"), str)]
        outputs = [c.get("message") or {"role": "assistant", "content": c.get("text")}
                   for c in choices]  # fmt: skip
    if reasons:
        out["gen_ai.response.finish_reasons"] = reasons
    if capture and wire != "embeddings":
        out["gen_ai.output.messages"] = _json([_message(m) for m in outputs])
    return out


class FrameTap:
    """Reads a stream's SSE frames as they pass: the response id and model (the first frames
    carry them), finish reasons and, with `capture`, the text deltas."""

    __slots__ = ("capture", "id", "model", "reasons", "text")

    def __init__(self, capture: bool) -> None:
        self.capture = capture
        self.id: str | None = None
        self.model: str | None = None
        self.reasons: list[str] = []
        self.text: list[str] = []

    def feed(self, frame: bytes) -> None:
        if self.model is None and (found := _MODEL.search(frame)):
            self.model = found.group(1).decode(errors="replace")
        if self.id is None and (found := _ID.search(frame)):
            self.id = found.group(1).decode(errors="replace")
        for reason in _FINISH.findall(frame):
            self.reasons.append(reason.decode(errors="replace"))
        if self.capture:
            for line in frame.split(b"\n"):
                if line.startswith(b"data: {"):
                    self.text.append(_delta_text(line[6:]))

    def attributes(self) -> Attributes:
        out: Attributes = {}
        if self.id is not None:
            out["gen_ai.response.id"] = self.id
        if self.model is not None:
            out["gen_ai.response.model"] = self.model
        if self.reasons:
            out["gen_ai.response.finish_reasons"] = self.reasons
        if self.capture:
            text = "".join(self.text)
            out["gen_ai.output.messages"] = _json(
                [{"role": "assistant", "parts": [{"type": "text", "content": text}]}]
            )
        return out


def _delta_text(data: bytes) -> str:
    """The text a streamed event adds: chat `choices[].delta.content`, Anthropic
    `delta.text`, Responses `response.output_text.delta`."""
    try:
        event = orjson.loads(data)
    except orjson.JSONDecodeError:
        return ""
    if not isinstance(event, dict):
        return ""
    if event.get("type") == "response.output_text.delta":
        return str(event.get("delta") or "")
    delta = event.get("delta")
    if isinstance(delta, dict) and isinstance(delta.get("text"), str):
        return str(delta["text"])
    for choice in event.get("choices") or ():
        if isinstance(choice, dict):
            content = (choice.get("delta") or {}).get("content") or choice.get("text")
            if isinstance(content, str):
                return content
    return ""


def _message(message: Any) -> Attributes:
    if not isinstance(message, dict):
        return {"role": "user", "parts": _parts(message)}
    role = message.get("role") or message.get("type") or "user"
    parts = _parts(message.get("content"))
    for call in message.get("tool_calls") or ():
        if isinstance(call, dict):
            function = call.get("function") or {}
            name, args = function.get("name"), function.get("arguments")
            parts.append({"type": "tool_call", "id": call.get("id"), "name": name,
                          "arguments": args})  # fmt: skip
    return {"role": role, "parts": parts}


def _parts(content: Any) -> list[Attributes]:
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "content": content}]
    if not isinstance(content, list):
        return [{"type": "text", "content": str(content)}]
    parts: list[Attributes] = []
    for block in content:
        if isinstance(block, str):
            parts.append({"type": "text", "content": block})
        elif isinstance(block, dict):
            kind = block.get("type")
            text = block.get("text")
            if isinstance(text, str):
                parts.append({"type": "text", "content": text})
            elif kind == "tool_use":
                name, args = block.get("name"), block.get("input")
                parts.append({"type": "tool_call", "id": block.get("id"), "name": name,
                              "arguments": args})  # fmt: skip
            elif kind == "tool_result":
                parts.append({"type": "tool_call_response", "id": block.get("tool_use_id"),
                              "response": block.get("content")})  # fmt: skip
            else:
                parts.append({"type": str(kind)})  # images, files: named, never inlined
    return parts


def _json(value: Any) -> str:
    return orjson.dumps(value, default=str).decode()
