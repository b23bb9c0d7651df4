"""Anthropic stream events -> OpenAI chunks (SPEC GW-2, GW-9, GW-10).

Chunks are checked with the real `openai` SDK's models and its stream accumulator.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletionChunk

from nerve.errors import UpstreamError
from nerve.gateway.providers.anthropic_wire import StreamTranslator, anthropic_error_message
from nerve.gateway.providers.sse import SSEParser


def sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def block_delta(index: int, delta: dict[str, Any]) -> bytes:
    return sse(
        "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
    )


def block_start(index: int, block: dict[str, Any]) -> bytes:
    return sse(
        "content_block_start",
        {"type": "content_block_start", "index": index, "content_block": block},
    )


def block_stop(index: int) -> bytes:
    return sse("content_block_stop", {"type": "content_block_stop", "index": index})


# A recorded-shape stream: thinking, text, then two tool calls whose JSON arrives in pieces.
RECORDED_STREAM = b"".join(
    [
        sse(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_014p7gG3wDgGV9EUtLvnow3U",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-sonnet-4-5-20250929",
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": 472,
                        "cache_creation_input_tokens": 0,
                        "cache_read_input_tokens": 28,
                        "output_tokens": 2,
                    },
                },
            },
        ),
        block_start(0, {"type": "thinking", "thinking": "", "signature": ""}),
        block_delta(0, {"type": "thinking_delta", "thinking": "Two cities."}),
        block_delta(0, {"type": "signature_delta", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"}),
        block_stop(0),
        block_start(1, {"type": "text", "text": ""}),
        sse("ping", {"type": "ping"}),
        block_delta(1, {"type": "text_delta", "text": "Checking "}),
        block_delta(1, {"type": "text_delta", "text": "Paris and 東京."}),
        block_stop(1),
        block_start(
            2,
            {
                "type": "tool_use",
                "id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
                "name": "get_weather",
                "input": {},
            },
        ),
        block_delta(2, {"type": "input_json_delta", "partial_json": ""}),
        block_delta(2, {"type": "input_json_delta", "partial_json": '{"city": "Pa'}),
        block_delta(2, {"type": "input_json_delta", "partial_json": 'ris"}'}),
        block_stop(2),
        block_start(
            3,
            {
                "type": "tool_use",
                "id": "toolu_01BbXkAXuFvQG7fxHNW5d1c2",
                "name": "get_weather",
                "input": {},
            },
        ),
        block_delta(3, {"type": "input_json_delta", "partial_json": '{"city": "東京"}'}),
        block_stop(3),
        sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                "usage": {"output_tokens": 89},
            },
        ),
        sse("message_stop", {"type": "message_stop"}),
    ]
)


def translate(raw: bytes, translator: StreamTranslator, piece: int = 17) -> list[dict[str, Any]]:
    """Parse the bytes in awkward pieces, as they would arrive, and translate each event."""
    parser = SSEParser()
    chunks: list[dict[str, Any]] = []
    for start in range(0, len(raw), piece):
        for event in parser.feed(raw[start : start + piece]):
            assert event.event is not None
            chunks += translator.feed(event.event, json.loads(event.data))
    return chunks


def deltas(chunks: list[dict[str, Any]]) -> list[Any]:
    return [
        (c["choices"][0]["delta"], c["choices"][0]["finish_reason"]) if c["choices"] else c["usage"]
        for c in chunks
    ]


def test_a_recorded_stream_translates_event_by_event() -> None:
    """GW-2, GW-10: each Anthropic event becomes the OpenAI chunk a client expects."""
    translator = StreamTranslator("claude-via-nerve", include_usage=True)
    chunks = translate(RECORDED_STREAM, translator)

    first = {
        "id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
        "type": "function",
        "function": {"name": "get_weather", "arguments": ""},
    }
    second = {
        "id": "toolu_01BbXkAXuFvQG7fxHNW5d1c2",
        "type": "function",
        "function": {"name": "get_weather", "arguments": ""},
    }
    assert deltas(chunks) == [
        ({"role": "assistant", "content": ""}, None),
        ({"reasoning_content": "Two cities."}, None),
        ({"content": "Checking "}, None),
        ({"content": "Paris and 東京."}, None),
        ({"tool_calls": [{"index": 0, **first}]}, None),
        ({"tool_calls": [{"index": 0, "function": {"arguments": '{"city": "Pa'}}]}, None),
        ({"tool_calls": [{"index": 0, "function": {"arguments": 'ris"}'}}]}, None),
        ({"tool_calls": [{"index": 1, **second}]}, None),
        ({"tool_calls": [{"index": 1, "function": {"arguments": '{"city": "東京"}'}}]}, None),
        ({}, "tool_calls"),
        {"prompt_tokens": 500, "completion_tokens": 89, "total_tokens": 589},
    ]
    assert {c["id"] for c in chunks} == {"msg_014p7gG3wDgGV9EUtLvnow3U"}
    assert {c["model"] for c in chunks} == {"claude-via-nerve"}
    assert len({c["created"] for c in chunks}) == 1
    assert all(c["usage"] is None for c in chunks[:-1])
    assert translator.usage == {"prompt_tokens": 500, "completion_tokens": 89, "total_tokens": 589}


def test_the_translated_stream_accumulates_in_the_openai_sdk_to_the_right_answer() -> None:
    """GW-10: the real client rebuilds both tool calls, with arguments that parse."""
    state = ChatCompletionStreamState()
    for chunk in translate(
        RECORDED_STREAM, StreamTranslator("claude", include_usage=True), piece=1
    ):
        state.handle_chunk(ChatCompletionChunk.model_validate(chunk))
    completion = state.get_final_completion()

    message = completion.choices[0].message
    assert message.content == "Checking Paris and 東京."
    assert completion.choices[0].finish_reason == "tool_calls"
    assert message.tool_calls is not None
    calls = [(c.id, c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls]
    assert calls == [
        ("toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather", {"city": "Paris"}),
        ("toolu_01BbXkAXuFvQG7fxHNW5d1c2", "get_weather", {"city": "東京"}),
    ]
    assert completion.usage is not None
    assert completion.usage.total_tokens == 589


def test_without_include_usage_there_is_no_usage_chunk_but_usage_is_still_known() -> None:
    translator = StreamTranslator("claude", include_usage=False)
    chunks = translate(RECORDED_STREAM, translator)

    assert all(c["choices"] and "usage" not in c for c in chunks)
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
    assert translator.usage == {"prompt_tokens": 500, "completion_tokens": 89, "total_tokens": 589}


def test_usage_is_unknown_before_message_start() -> None:
    assert StreamTranslator("claude", include_usage=True).usage is None


def test_input_counts_repeated_in_message_delta_update_the_prompt_tokens() -> None:
    translator = StreamTranslator("claude", include_usage=False)
    translator.feed(
        "message_start",
        {
            "type": "message_start",
            "message": {"id": "m", "usage": {"input_tokens": 10, "output_tokens": 1}},
        },
    )
    translator.feed(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"input_tokens": 12, "cache_read_input_tokens": 3, "output_tokens": 40},
        },
    )

    assert translator.usage == {"prompt_tokens": 15, "completion_tokens": 40, "total_tokens": 55}


def test_a_tool_call_that_streams_no_json_gets_empty_object_arguments() -> None:
    """GW-10: the client can always json.loads the arguments it accumulated."""
    raw = b"".join(
        [
            sse("message_start", {"type": "message_start", "message": {"id": "m", "usage": {}}}),
            block_start(0, {"type": "tool_use", "id": "toolu_1", "name": "now", "input": {}}),
            block_delta(0, {"type": "input_json_delta", "partial_json": ""}),
            block_stop(0),
        ]
    )
    chunks = translate(raw, StreamTranslator("claude", include_usage=False))

    assert deltas(chunks)[-1] == (
        {"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]},
        None,
    )


def test_ping_and_unknown_events_produce_nothing() -> None:
    translator = StreamTranslator("claude", include_usage=True)

    assert translator.feed("ping", {"type": "ping"}) == []
    assert translator.feed("something_new", {"type": "something_new"}) == []
    assert (
        translator.feed("content_block_delta", {"index": 0, "delta": {"type": "citations_delta"}})
        == []
    )


def test_server_tool_blocks_are_not_forwarded_as_client_tool_calls() -> None:
    translator = StreamTranslator("claude", include_usage=False)
    start = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}

    assert translator.feed("content_block_start", {"index": 0, "content_block": start}) == []
    delta = {"type": "input_json_delta", "partial_json": '{"query": "x"}'}
    assert translator.feed("content_block_delta", {"index": 0, "delta": delta}) == []


def test_an_error_event_mid_stream_raises_an_upstream_error() -> None:
    """GW-9: the caller turns this into one SSE error chunk and ends the stream."""
    translator = StreamTranslator("claude", include_usage=False)
    translator.feed("message_start", {"type": "message_start", "message": {"id": "m", "usage": {}}})
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}

    with pytest.raises(UpstreamError) as caught:
        translator.feed("error", error)

    assert caught.value.code == "upstream_stream_error"
    assert caught.value.message == "overloaded_error: Overloaded"


def test_message_stop_without_a_stop_reason_still_finishes_the_choice() -> None:
    translator = StreamTranslator("claude", include_usage=False)
    translator.feed("message_start", {"type": "message_start", "message": {"id": "m", "usage": {}}})

    assert deltas(translator.feed("message_stop", {"type": "message_stop"})) == [({}, "stop")]


def test_an_anthropic_error_body_reads_as_type_and_message() -> None:
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}

    assert anthropic_error_message(body) == "overloaded_error: Overloaded"
    assert anthropic_error_message({"type": "error", "error": {"message": "odd"}}) == "odd"
