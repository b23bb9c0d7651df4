"""OpenAI chat chunks -> Anthropic Messages stream events (the /v1/messages translation).

Every frame is parsed as the real `anthropic` SDK parses it (RawMessageStreamEvent) and the
stream is accumulated with the SDK's own `accumulate_event`, as `client.messages.stream` does.
"""

from __future__ import annotations

import json
import re
from typing import Any

import anthropic
import pytest
from anthropic.lib.streaming._messages import accumulate_event
from anthropic.types import ErrorResponse, Message, RawMessageStreamEvent
from pydantic import TypeAdapter

from nerve.errors import UpstreamError
from nerve.gateway.dialects.messages_wire import PING, MessagesStream, messages_to_chat

EVENT = TypeAdapter(RawMessageStreamEvent)
FRAME = re.compile(rb"event: ([a-z_]+)\ndata: ([^\n]+)\n\n")


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> dict:
    choice = {"index": 0, "delta": delta or {}, "finish_reason": finish}
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "up",
            "choices": [choice], **extra}  # fmt: skip


def text(piece: str) -> dict:
    return chunk({"content": piece})


def call(index: int, arguments: str, id: str | None = None, name: str | None = None) -> dict:
    function: dict[str, Any] = {"arguments": arguments}
    if name:
        function["name"] = name
    tool: dict[str, Any] = {"index": index, "function": function}
    if id:
        tool.update(id=id, type="function")
    return chunk({"tool_calls": [tool]})


def usage_chunk(prompt: int, completion: int, **extra: Any) -> dict:
    usage = {"prompt_tokens": prompt, "completion_tokens": completion,
             "total_tokens": prompt + completion, **extra}  # fmt: skip
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [], "usage": usage}


def run(chunks: list[dict], input_tokens: int = 50) -> tuple[list[dict], Message, MessagesStream]:
    """Feed `chunks`, finish at [DONE]; every frame checked: its bytes, its event name, and its
    data as the SDK's event union; the SDK's accumulation of them as the final message."""
    stream = MessagesStream("claude-x", input_tokens=input_tokens)
    frames = [frame for c in chunks for frame in stream.feed(c)] + stream.finish()
    events: list[dict] = []
    snapshot = None
    buffers: dict[int, bytes] = {}
    for frame in frames:
        match = FRAME.fullmatch(frame)
        assert match, frame
        data = json.loads(match[2])
        assert data["type"] == match[1].decode()
        event = EVENT.validate_python(data)
        snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=buffers)
        events.append(data)
    assert snapshot is not None
    return events, Message.model_validate(snapshot.model_dump()), stream


def kinds(events: list[dict]) -> list[str]:
    return [e["type"] for e in events]


def test_text_becomes_one_text_block_with_the_upstreams_usage():
    events, final, stream = run(
        [chunk({"role": "assistant", "content": ""}), text("Hel"), text("lo"), chunk(finish="stop"),
         usage_chunk(9, 2)]
    )  # fmt: skip
    assert kinds(events) == ["message_start", "content_block_start", "content_block_delta",
                             "content_block_delta", "content_block_stop", "message_delta",
                             "message_stop"]  # fmt: skip
    start = events[0]["message"]
    assert start["model"] == "claude-x" and start["id"].startswith("msg_")
    assert start["usage"] == {"input_tokens": 50, "output_tokens": 1}  # the estimate, at first
    assert [b.type for b in final.content] == ["text"] and final.content[0].text == "Hello"
    assert final.stop_reason == "end_turn" and final.stop_sequence is None
    assert (final.usage.input_tokens, final.usage.output_tokens) == (9, 2)
    assert stream.usage == {"prompt_tokens": 9, "completion_tokens": 2, "total_tokens": 11}


def test_a_tool_call_streams_as_a_tool_use_block_with_its_input_in_pieces():
    events, final, _ = run(
        [call(0, "", id="call_1", name="Bash"), call(0, '{"comm'), call(0, 'and": "ls -la"}'),
         chunk(finish="tool_calls")]
    )  # fmt: skip
    start = events[1]
    assert start["content_block"] == {"type": "tool_use", "id": "call_1", "name": "Bash",
                                      "input": {}}  # fmt: skip
    pieces = [e["delta"]["partial_json"] for e in events if e["type"] == "content_block_delta"]
    assert pieces == ['{"comm', 'and": "ls -la"}']
    use = final.content[0]
    assert use.type == "tool_use" and (use.id, use.name) == ("call_1", "Bash")
    assert use.input == {"command": "ls -la"}
    assert final.stop_reason == "tool_use"


def test_a_tool_call_then_its_result_then_the_answer():
    """The accumulated tool_use goes back up as the client sends it, and the answer streams."""
    _, first, _ = run([call(0, '{"path": "a.txt"}', id="call_9", name="Read"),
                       chunk(finish="tool_calls")])  # fmt: skip
    history = {"model": "m", "max_tokens": 100, "messages": [
        {"role": "user", "content": "read a.txt"},
        {"role": "assistant", "content": [b.model_dump() for b in first.content]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_9",
                                      "content": "hello"}]}]}  # fmt: skip
    up = messages_to_chat(history)["messages"]
    assert up[1]["tool_calls"] == [{"id": "call_9", "type": "function", "function": {
        "name": "Read", "arguments": '{"path":"a.txt"}'}}]  # fmt: skip
    assert up[2] == {"role": "tool", "tool_call_id": "call_9", "content": "hello"}
    _, answer, _ = run([text("It says hello."), chunk(finish="stop")])
    assert answer.content[0].text == "It says hello." and answer.stop_reason == "end_turn"


def test_two_tool_calls_are_two_blocks_each_closed_before_the_next_opens():
    events, final, _ = run(
        [call(0, '{"a":', id="call_a", name="One"), call(0, " 1}"),
         call(1, '{"b": 2}', id="call_b", name="Two"), chunk(finish="tool_calls")]
    )  # fmt: skip
    assert kinds(events)[1:-2] == ["content_block_start", "content_block_delta",
                                   "content_block_delta", "content_block_stop",
                                   "content_block_start", "content_block_delta",
                                   "content_block_stop"]  # fmt: skip
    assert [e["index"] for e in events if "index" in e] == [0, 0, 0, 0, 1, 1, 1]
    assert [(b.id, b.input) for b in final.content] == [("call_a", {"a": 1}), ("call_b", {"b": 2})]


def test_text_then_a_tool_call_closes_the_text_block_first():
    events, final, _ = run([text("Let me look."), call(0, '{"q": "x"}', id="c1", name="Grep"),
                            chunk(finish="tool_calls")])  # fmt: skip
    assert kinds(events)[1:5] == ["content_block_start", "content_block_delta",
                                  "content_block_stop", "content_block_start"]  # fmt: skip
    assert events[3] == {"type": "content_block_stop", "index": 0}
    assert events[4]["index"] == 1
    assert final.content[0].text == "Let me look."
    assert final.content[1].type == "tool_use" and final.content[1].input == {"q": "x"}


def test_text_after_a_tool_call_opens_a_new_text_block():
    _, final, _ = run([call(0, "{}", id="c1", name="Now"), text("done"), chunk(finish="stop")])
    assert [b.type for b in final.content] == ["tool_use", "text"]
    assert final.content[1].text == "done"


def test_usage_on_the_finish_chunk_and_cached_input_count_as_anthropic_counts_them():
    usage = {"prompt_tokens": 100, "completion_tokens": 7, "total_tokens": 107,
             "prompt_tokens_details": {"cached_tokens": 60}}  # fmt: skip
    events, final, stream = run([text("hi"), chunk(finish="stop", usage=usage)])
    assert events[-2]["usage"] == {"input_tokens": 40, "output_tokens": 7,
                                   "cache_read_input_tokens": 60}  # fmt: skip
    assert (final.usage.input_tokens, final.usage.cache_read_input_tokens) == (40, 60)
    assert stream.usage == {"prompt_tokens": 100, "completion_tokens": 7, "total_tokens": 107}


def test_without_a_usage_chunk_the_input_estimate_stays_and_the_output_is_estimated():
    events, final, stream = run([text("The quick brown fox jumps over the lazy dog."),
                                 chunk(finish="stop")], input_tokens=321)  # fmt: skip
    assert final.usage.input_tokens == 321
    assert 8 <= final.usage.output_tokens <= 14  # ~10 tokens by any BPE tokenizer
    assert events[-2]["usage"]["input_tokens"] == 321
    assert stream.usage is None  # nothing real for the stats


def test_finish_reason_length_is_max_tokens():
    _, final, _ = run([text("cut"), chunk(finish="length")])
    assert final.stop_reason == "max_tokens"


@pytest.mark.parametrize(("finish", "stop"), [("content_filter", "refusal"), (None, "end_turn"),
                                              ("something_new", "end_turn")])  # fmt: skip
def test_other_finish_reasons(finish, stop):
    _, final, _ = run([text("x"), chunk(finish=finish)])
    assert final.stop_reason == stop


def test_a_tool_call_finished_with_stop_is_still_tool_use():
    """Ollama and some vLLM tool parsers end a tool call with finish_reason "stop"."""
    _, final, _ = run([call(0, "{}", id="c1", name="Now"), chunk(finish="stop")])
    assert final.stop_reason == "tool_use"


def test_tool_calls_without_an_index_are_told_apart_by_their_id():
    calls = [
        {"id": "c1", "type": "function", "function": {"name": "A", "arguments": '{"x":'}},
        {"function": {"arguments": " 1}"}},
        {"id": "c2", "type": "function", "function": {"name": "B", "arguments": "{}"}},
    ]
    _, final, _ = run([chunk({"tool_calls": [c]}) for c in calls] + [chunk(finish="tool_calls")])
    assert [(b.id, b.name, b.input) for b in final.content] == [("c1", "A", {"x": 1}),
                                                                 ("c2", "B", {})]  # fmt: skip


def test_reasoning_content_is_not_passed_on_as_thinking():
    events, final, _ = run([chunk({"reasoning_content": "let me think"}), text("4"),
                            chunk(finish="stop")])  # fmt: skip
    assert [b.type for b in final.content] == ["text"]
    assert "let me think" not in json.dumps(events)


def test_an_empty_stream_is_still_a_whole_message():
    events, final, _ = run([])
    assert kinds(events) == ["message_start", "message_delta", "message_stop"]
    assert final.content == [] and final.stop_reason == "end_turn"


def test_finish_is_said_once_and_nothing_follows_it():
    stream = MessagesStream("m", input_tokens=1)
    stream.feed(text("a"))
    assert stream.finish()
    assert stream.finish() == [] and stream.feed(text("late")) == []


def test_interleaved_tool_call_arguments_are_an_upstream_error():
    """A closed block cannot be added to: better a clear error than a wrong tool input."""
    stream = MessagesStream("m", input_tokens=1)
    stream.feed(call(0, "{", id="a", name="A"))
    stream.feed(call(1, "{}", id="b", name="B"))
    with pytest.raises(UpstreamError) as caught:
        stream.feed(call(0, "}"))
    assert caught.value.code == "upstream_bad_stream"


def test_an_error_sent_in_the_stream_is_an_upstream_error():
    stream = MessagesStream("m", input_tokens=1)
    with pytest.raises(UpstreamError) as caught:
        stream.feed({"error": {"message": "model overloaded", "code": 503}})
    assert "model overloaded" in caught.value.message
    assert caught.value.code == "upstream_stream_error"


def test_the_error_frame_is_one_the_sdk_reads_as_an_error():
    frame = MessagesStream("m", input_tokens=1).error("upstream died", "overloaded_error")
    assert frame == (b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error",'
                     b'"message":"upstream died"}}\n\n')  # fmt: skip
    match = FRAME.fullmatch(frame)
    assert match
    error = ErrorResponse.model_validate(json.loads(match[2]))
    assert (error.error.type, error.error.message) == ("overloaded_error", "upstream died")
    default = FRAME.fullmatch(MessagesStream("m", input_tokens=1).error("x"))
    assert default and json.loads(default[2])["error"]["type"] == "api_error"


def test_ping_is_the_event_the_sdk_skips():
    """The SDK skips an event named ping (RawMessageStreamEvent has no ping member)."""
    match = FRAME.fullmatch(PING)
    assert match and match[1] == b"ping" and json.loads(match[2]) == {"type": "ping"}


def test_the_sdk_accepts_every_event_kind_it_is_sent():
    """The union the SDK parses a stream with knows every event type the translator emits."""
    events, _, _ = run([text("a"), call(0, "{}", id="c", name="T"), chunk(finish="tool_calls"),
                        usage_chunk(3, 4)])  # fmt: skip
    for data in events:
        parsed = EVENT.validate_python(data)
        assert isinstance(parsed, anthropic.BaseModel) and parsed.type == data["type"]
