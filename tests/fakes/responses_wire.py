"""OpenAI Responses, embeddings and completions wire shapes for the fake upstream.

Pure functions from a `Reply` to dicts and tagged SSE events, as in openai_wire: "open"
(framing before content), "piece" (one text or argument delta), "close" (framing after).
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from tests.fakes import openai_wire
from tests.fakes.openai_wire import Event

if TYPE_CHECKING:
    from tests.fakes.upstream import Reply


def validate(body: Any, needs: str) -> tuple[int, dict[str, Any]] | None:
    """The 400 the real API gives when `model` or the field `needs` is missing."""
    if not isinstance(body, dict):
        return 400, openai_wire.error_body(400, "We could not parse the JSON body of your request.")
    if not body.get("model"):
        return 400, openai_wire.error_body(400, "you must provide a model parameter")
    if body.get(needs) is None:
        message = f"Missing required parameter: '{needs}'."
        return 400, openai_wire.error_body(400, message, param=needs,
                                           code="missing_required_parameter")  # fmt: skip
    return None


def _usage(reply: Reply) -> dict[str, Any]:
    u = openai_wire.usage(reply)
    return {"input_tokens": u["prompt_tokens"], "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": u["completion_tokens"],
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": u["total_tokens"]}  # fmt: skip


def _items(reply: Reply, rid: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    texts = openai_wire.pieces(reply)
    if texts or not reply.tool_calls:
        text = {"type": "output_text", "text": "".join(texts), "annotations": []}
        items.append({"type": "message", "id": f"msg_{rid}", "status": "completed",
                      "role": "assistant", "content": [text]})  # fmt: skip
    for i, call in enumerate(openai_wire.tool_calls(reply)):
        fn = call["function"]
        items.append({"type": "function_call", "id": f"fc_{rid}_{i}", "call_id": call["id"],
                      "name": fn["name"], "arguments": fn["arguments"],
                      "status": "completed"})  # fmt: skip
    return items


def response(reply: Reply, model: str, rid: str, *, status: str = "completed") -> dict[str, Any]:
    return {"id": f"resp_{rid}", "object": "response", "created_at": int(time.time()),
            "status": status, "model": model, "output": _items(reply, rid),
            "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
            "usage": _usage(reply), "error": None, "incomplete_details": None,
            **reply.extra}  # fmt: skip


def stream_events(reply: Reply, model: str, rid: str) -> list[Event]:
    full = response(reply, model, rid)
    seq = iter(range(1_000_000))

    def sse(kind: str, fields: dict[str, Any]) -> bytes:
        data = json.dumps({"type": kind, "sequence_number": next(seq), **fields},
                          separators=(",", ":"))  # fmt: skip
        return f"event: {kind}\ndata: {data}\n\n".encode()

    start = {**full, "status": "in_progress", "output": [], "usage": None}
    events: list[Event] = [("open", sse("response.created", {"response": start})),
                           ("open", sse("response.in_progress", {"response": start}))]  # fmt: skip
    for index, item in enumerate(full["output"]):
        where = {"output_index": index, "item_id": item["id"]}
        if item["type"] == "message":
            text = item["content"][0]["text"]
            empty = {**item, "status": "in_progress", "content": []}
            part = {"type": "output_text", "text": "", "annotations": []}
            events.append(("open", sse("response.output_item.added",
                                       {"output_index": index, "item": empty})))  # fmt: skip
            events.append(("open", sse("response.content_part.added",
                                       {**where, "content_index": 0, "part": part})))  # fmt: skip
            events += [("piece", sse("response.output_text.delta",
                                     {**where, "content_index": 0, "delta": t, "logprobs": []}))
                       for t in openai_wire.pieces(reply)]  # fmt: skip
            events.append(("close", sse("response.output_text.done",
                                        {**where, "content_index": 0, "text": text,
                                         "logprobs": []})))  # fmt: skip
            events.append(("close", sse("response.content_part.done",
                                        {**where, "content_index": 0,
                                         "part": {**part, "text": text}})))  # fmt: skip
        else:
            empty = {**item, "status": "in_progress", "arguments": ""}
            events.append(("open", sse("response.output_item.added",
                                       {"output_index": index, "item": empty})))  # fmt: skip
            events += [("piece", sse("response.function_call_arguments.delta",
                                     {**where, "delta": p}))
                       for p in openai_wire.split(item["arguments"])]  # fmt: skip
            events.append(("close", sse("response.function_call_arguments.done",
                                        {**where, "arguments": item["arguments"]})))  # fmt: skip
        events.append(("close", sse("response.output_item.done",
                                    {"output_index": index, "item": item})))  # fmt: skip
    events.append(("close", sse("response.completed", {"response": full})))
    return events


def embeddings(body: dict[str, Any], model: str) -> dict[str, Any]:
    """One small vector per input, made from its text so tests can tell them apart."""
    inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
    data = [{"object": "embedding", "index": i,
             "embedding": [float(len(str(text))), float(i), 0.5]}
            for i, text in enumerate(inputs)]  # fmt: skip
    tokens = sum(len(str(text).split()) or 1 for text in inputs)
    return {"object": "list", "data": data, "model": model,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}  # fmt: skip


def completion(reply: Reply, model: str, rid: str, body: dict[str, Any]) -> dict[str, Any]:
    text = reply.text + (f"<suffix:{body['suffix']}>" if body.get("suffix") else "")
    return {"id": rid, "object": "text_completion", "created": int(time.time()), "model": model,
            "choices": [{"text": text, "index": 0, "logprobs": None, "finish_reason": "stop"}],
            "usage": openai_wire.usage(reply)}  # fmt: skip


def completion_events(reply: Reply, model: str, rid: str, *, include_usage: bool) -> list[Event]:
    def chunk(text: str, finish: str | None) -> bytes:
        return openai_wire.sse({"id": rid, "object": "text_completion", "model": model,
                                "created": int(time.time()),
                                "choices": [{"text": text, "index": 0, "logprobs": None,
                                             "finish_reason": finish}]})  # fmt: skip

    events: list[Event] = [("piece", chunk(t, None)) for t in openai_wire.pieces(reply)]
    events.append(("close", chunk("", "stop")))
    if include_usage:
        events.append(("close", openai_wire.sse({"id": rid, "object": "text_completion",
                                                 "model": model, "choices": [],
                                                 "usage": openai_wire.usage(reply)})))  # fmt: skip
    events.append(("close", b"data: [DONE]\n\n"))
    return events
