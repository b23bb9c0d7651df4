"""A fast fake upstream speaking the three wire protocols nerve serves, for bench/protocols.py.

    python -m bench.protocol_upstream [--host 127.0.0.1] [--port 0] [--port-file FILE]
        [--chunk-delay-ms 0]

Answers, with bodies built once at import (fixed ids and timestamps, the same ~20-piece reply):
POST /v1/chat/completions (chat.completion JSON), POST /v1/messages (Anthropic message JSON),
POST /v1/responses (Response JSON), and GET /health; a chat request for a model of
TOOL_COMMANDS gets a Bash tool call instead (bench/guard_http.py). When the request body has
"stream": true each answers its protocol's SSE stream instead, one write per event:

    chat       role chunk, 20 content chunks, finish chunk, usage chunk, [DONE]
    messages   message_start, content_block_start, ping, 20 text_delta, content_block_stop,
               message_delta (usage), message_stop
    responses  response.created, response.in_progress, output_item.added, content_part.added,
               20 output_text.delta, output_text.done, content_part.done, output_item.done,
               response.completed (usage)

The shapes follow the openai/anthropic SDK types and tests/fakes/*_wire.py. --chunk-delay-ms
sleeps between stream events (default 0: every event is written as fast as aiohttp can). It
parses each request body (orjson) only to find "stream", so all targets pay the same.
The request bodies bench/protocols.py sends (one per protocol, ~1 KB) live here too, so the
wire shapes of both directions are in one place.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from typing import Any

import orjson
import uvloop
from aiohttp import web

from bench.loadgen import SYSTEM_PROMPT, USER_PROMPT, chat_request_body
from bench.upstream import serve_app

MODEL = "bench-model"
CREATED = 1764460800
PIECES = [
    "Keep-alive ", "pooling lets ", "the gateway ", "reuse one ", "TCP connection ",
    "for many ", "requests, so ", "each call ", "skips the ", "handshake and ",
    "slow start. ", "For a worker ", "at a few ", "hundred requests ", "per second, ",
    "a pool of ", "ten to twenty ", "connections is ", "usually ", "enough.",
]  # fmt: skip
REPLY = "".join(PIECES)
PROMPT_TOKENS, COMPLETION_TOKENS = 212, len(PIECES)
FIRST_TURN = "Hi! I have a question about our gateway."
SECOND_TURN = "Sure, what would you like to know about it?"


# -- request bodies (what the clients send) ---------------------------------------------------


def chat_body(model: str, stream: bool = False) -> bytes:
    body = orjson.loads(chat_request_body(model))
    if stream:
        body |= {"stream": True, "stream_options": {"include_usage": True}}
    return orjson.dumps(body)


def messages_body(model: str, stream: bool = False) -> bytes:
    return orjson.dumps(
        {
            "model": model,
            "max_tokens": 256,
            "system": SYSTEM_PROMPT,
            "messages": [
                {"role": "user", "content": FIRST_TURN},
                {"role": "assistant", "content": SECOND_TURN},
                {"role": "user", "content": [{"type": "text", "text": USER_PROMPT}]},
            ],
            "temperature": 0.2,
            "metadata": {"user_id": "bench-user-0001"},
            **({"stream": True} if stream else {}),
        }
    )


def responses_body(model: str, stream: bool = False) -> bytes:
    return orjson.dumps(
        {
            "model": model,
            "instructions": SYSTEM_PROMPT,
            "input": [
                {"type": "message", "role": "user", "content": FIRST_TURN},
                {"type": "message", "role": "assistant", "content": SECOND_TURN},
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": USER_PROMPT}],
                },
            ],
            "temperature": 0.2,
            "max_output_tokens": 256,
            "store": False,
            "user": "bench-user-0001",
            **({"stream": True} if stream else {}),
        }
    )


# -- chat completions -------------------------------------------------------------------------

CHAT_USAGE = {
    "prompt_tokens": PROMPT_TOKENS,
    "completion_tokens": COMPLETION_TOKENS,
    "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS,
}
CHAT_ID = "chatcmpl-bench000000000000000000000001"
CHAT_JSON = orjson.dumps(
    {
        "id": CHAT_ID,
        "object": "chat.completion",
        "created": CREATED,
        "model": MODEL,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": REPLY, "refusal": None},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": CHAT_USAGE,
        "system_fingerprint": "fp_bench",
    }
)


def _chat_chunk(choices: list[dict[str, Any]], usage: dict[str, int] | None = None) -> bytes:
    chunk = {
        "id": CHAT_ID,
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": MODEL,
        "system_fingerprint": "fp_bench",
        "choices": choices,
        "usage": usage,
    }
    return b"data: " + orjson.dumps(chunk) + b"\n\n"


def _chat_delta(delta: dict[str, Any], finish: str | None = None) -> bytes:
    return _chat_chunk([{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}])


CHAT_EVENTS = [
    _chat_delta({"role": "assistant", "content": "", "refusal": None}),
    *(_chat_delta({"content": piece}) for piece in PIECES),
    _chat_delta({}, "stop"),
    _chat_chunk([], CHAT_USAGE),
    b"data: [DONE]\n\n",
]


# -- Anthropic messages -----------------------------------------------------------------------


def _sse(kind: str, fields: dict[str, Any]) -> bytes:
    data = orjson.dumps({"type": kind, **fields})
    return b"event: " + kind.encode() + b"\ndata: " + data + b"\n\n"


ANTHROPIC_USAGE = {
    "input_tokens": PROMPT_TOKENS,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 0,
    "output_tokens": COMPLETION_TOKENS,
    "service_tier": "standard",
}
MESSAGE = {
    "id": "msg_bench0000000000000000000001",
    "type": "message",
    "role": "assistant",
    "model": MODEL,
    "content": [{"type": "text", "text": REPLY}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": ANTHROPIC_USAGE,
}
MESSAGE_JSON = orjson.dumps(MESSAGE)
_MESSAGE_START = {
    **MESSAGE,
    "content": [],
    "stop_reason": None,
    "usage": {**ANTHROPIC_USAGE, "output_tokens": 1},
}
MESSAGE_EVENTS = [
    _sse("message_start", {"message": _MESSAGE_START}),
    _sse("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}),
    _sse("ping", {}),
    *(
        _sse("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": piece}})
        for piece in PIECES
    ),
    _sse("content_block_stop", {"index": 0}),
    _sse(
        "message_delta",
        {
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": COMPLETION_TOKENS},
        },
    ),
    _sse("message_stop", {}),
]


# -- OpenAI responses -------------------------------------------------------------------------

RESPONSE_USAGE = {
    "input_tokens": PROMPT_TOKENS,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": COMPLETION_TOKENS,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS,
}
ITEM_ID = "msg_bench0000000000000000000002"
TEXT_PART = {"type": "output_text", "text": REPLY, "annotations": [], "logprobs": []}
ITEM = {
    "type": "message",
    "id": ITEM_ID,
    "status": "completed",
    "role": "assistant",
    "content": [TEXT_PART],
}
RESPONSE = {
    "id": "resp_bench0000000000000000000003",
    "object": "response",
    "created_at": CREATED,
    "status": "completed",
    "background": False,
    "error": None,
    "incomplete_details": None,
    "instructions": SYSTEM_PROMPT,
    "max_output_tokens": 256,
    "model": MODEL,
    "output": [ITEM],
    "parallel_tool_calls": True,
    "previous_response_id": None,
    "reasoning": {"effort": None, "summary": None},
    "store": False,
    "temperature": 0.2,
    "text": {"format": {"type": "text"}, "verbosity": "medium"},
    "tool_choice": "auto",
    "tools": [],
    "top_p": 1.0,
    "truncation": "disabled",
    "usage": RESPONSE_USAGE,
    "user": "bench-user-0001",
    "metadata": {},
}
RESPONSE_JSON = orjson.dumps(RESPONSE)


def _response_events() -> list[bytes]:
    kinds_and_fields: list[tuple[str, dict[str, Any]]] = []
    at = {"output_index": 0, "item_id": ITEM_ID, "content_index": 0}
    started = {**RESPONSE, "status": "in_progress", "output": [], "usage": None}
    kinds_and_fields += [
        ("response.created", {"response": started}),
        ("response.in_progress", {"response": started}),
        (
            "response.output_item.added",
            {"output_index": 0, "item": {**ITEM, "status": "in_progress", "content": []}},
        ),
        ("response.content_part.added", {**at, "part": {**TEXT_PART, "text": ""}}),
    ]
    kinds_and_fields += [
        ("response.output_text.delta", {**at, "delta": piece, "logprobs": []}) for piece in PIECES
    ]
    kinds_and_fields += [
        ("response.output_text.done", {**at, "text": REPLY, "logprobs": []}),
        ("response.content_part.done", {**at, "part": TEXT_PART}),
        ("response.output_item.done", {"output_index": 0, "item": ITEM}),
        ("response.completed", {"response": RESPONSE}),
    ]
    return [
        _sse(kind, {"sequence_number": seq, **fields})
        for seq, (kind, fields) in enumerate(kinds_and_fields)
    ]


RESPONSE_EVENTS = _response_events()


# -- chat tool calls (bench/guard_http.py): the model name says which command ------------------

TOOL_COMMANDS = {"bench-tool-ls": "ls -la", "bench-tool-rm": "rm -rf ~"}


def _tool_answers(command: str) -> tuple[bytes, list[bytes]]:
    """A Bash call of `command`: the answer, and its stream with the arguments in 20 pieces."""
    arguments = orjson.dumps({"command": command, "description": REPLY}).decode()
    call = {"id": "call_bench1", "type": "function",
            "function": {"name": "Bash", "arguments": arguments}}  # fmt: skip
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": "tool_calls"}
    body = orjson.dumps({"id": CHAT_ID, "object": "chat.completion", "created": CREATED,
                         "model": MODEL, "choices": [choice], "usage": CHAT_USAGE})  # fmt: skip
    step = -(-len(arguments) // 20)
    pieces = [arguments[i : i + step] for i in range(0, len(arguments), step)]
    head = {"index": 0, "id": call["id"], "type": "function",
            "function": {"name": "Bash", "arguments": ""}}  # fmt: skip
    events = [
        _chat_delta({"role": "assistant", "content": None, "tool_calls": [head]}),
        *(_chat_delta({"tool_calls": [{"index": 0, "function": {"arguments": p}}]})
          for p in pieces),
        _chat_delta({}, "tool_calls"),
        _chat_chunk([], CHAT_USAGE),
        b"data: [DONE]\n\n",
    ]  # fmt: skip
    return body, events


CHAT_TOOLS = {model: _tool_answers(command) for model, command in TOOL_COMMANDS.items()}


# -- HTTP -------------------------------------------------------------------------------------


def answer(
    json_body: bytes, events: list[bytes], delay: float,
    by_model: dict[str, tuple[bytes, list[bytes]]] | None = None,
) -> Any:  # fmt: skip
    async def handle(request: web.Request) -> web.StreamResponse:
        try:
            body = orjson.loads(await request.read())
        except orjson.JSONDecodeError:
            return web.json_response({"error": {"message": "bad JSON"}}, status=400)
        ok = isinstance(body, dict)
        answers = by_model.get(body.get("model")) if by_model and ok else None
        plain, stream = answers or (json_body, events)
        if not (ok and body.get("stream") is True):
            return web.Response(body=plain, content_type="application/json")
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        for event in stream:
            await response.write(event)
            if delay:
                await asyncio.sleep(delay)
        await response.write_eof()
        return response

    return handle


async def health(request: web.Request) -> web.Response:
    return web.Response(body=b'{"status":"ok"}', content_type="application/json")


def make_app(delay: float = 0.0) -> web.Application:
    app = web.Application()
    app.router.add_post("/v1/chat/completions", answer(CHAT_JSON, CHAT_EVENTS, delay, CHAT_TOOLS))
    app.router.add_post("/v1/messages", answer(MESSAGE_JSON, MESSAGE_EVENTS, delay))
    app.router.add_post("/v1/responses", answer(RESPONSE_JSON, RESPONSE_EVENTS, delay))
    app.router.add_get("/health", health)
    return app


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (default)")
    parser.add_argument("--port-file", help="write the bound port here once listening")
    parser.add_argument("--chunk-delay-ms", type=float, default=0.0, help="between SSE events")
    args = parser.parse_args(argv)
    app = make_app(args.chunk_delay_ms / 1000)
    banner = "protocol upstream listening on {url}"
    with contextlib.suppress(KeyboardInterrupt):
        uvloop.run(serve_app(app, args.host, args.port, args.port_file, banner))
    sys.exit(0)


if __name__ == "__main__":
    main()
