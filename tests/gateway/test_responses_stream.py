"""chat.completion.chunk streams -> OpenAI Responses SSE events (SPEC GW-21).

Every frame is parsed with the real `openai` SDK's ResponseStreamEvent union and fed to the SDK's
own stream accumulator (ResponseStreamState), which refuses events out of order, items that
never finish and identities that change.
"""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest
from openai.lib.streaming.responses import ResponseStreamState
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseContentPartAddedEvent,
    ResponseContentPartDoneEvent,
    ResponseCreatedEvent,
    ResponseInProgressEvent,
    ResponseOutputItemAddedEvent,
    ResponseOutputItemDoneEvent,
    ResponseStreamEvent,
    ResponseTextDeltaEvent,
    ResponseTextDoneEvent,
)
from pydantic import TypeAdapter

from nerve.errors import UpstreamError
from nerve.gateway.dialects.responses_wire import ResponsesStream
from tests.gateway.codex_tools import APPLY_PATCH, JSON, PATCH, SHELL

EVENTS: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)
USAGE: JSON = {"prompt_tokens": 7, "completion_tokens": 5, "total_tokens": 12}


def chunk(delta: JSON | None = None, finish: str | None = None) -> JSON:
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "up",
        "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}],
    }


def usage_chunk(usage: JSON = USAGE) -> JSON:
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "model": "up",
        "choices": [],
        "usage": usage,
    }


def tool(index: int, fragment: str, call_id: str | None = None, name: str | None = None) -> JSON:
    call: JSON = {"index": index, "function": {"arguments": fragment}}
    if call_id:
        call.update(id=call_id, type="function")
        call["function"]["name"] = name
    return chunk({"tool_calls": [call]})


def run(chunks: list[JSON], tools: list[JSON] | None = None, *, end: bool = True) -> list[Any]:
    """The events a stream of `chunks` gives, checked frame by frame with the SDK."""
    body = {"model": "gpt-5-codex", "input": "hi", "tools": tools or []}
    stream = ResponsesStream(body, "up-model")
    frames = [frame for c in chunks for frame in stream.feed(c)]
    frames += stream.finish() if end else []
    return check(frames, body)


def check(frames: list[bytes], body: JSON) -> list[Any]:
    state = ResponseStreamState(input_tools=body["tools"], text_format=openai.omit)
    events = []
    for frame in frames:
        head, _, data = frame.partition(b"\n")
        assert frame.endswith(b"\n\n") and data.startswith(b"data: ")
        event = EVENTS.validate_json(data[len(b"data: ") :])
        assert head == b"event: " + event.type.encode()
        state.handle_event(event)  # raises on anything the SDK would not accept
        events.append(event)
    assert [e.sequence_number for e in events] == list(range(len(events)))
    return events


def split(blob: bytes) -> list[bytes]:
    return [frame + b"\n\n" for frame in blob.split(b"\n\n") if frame]


def final(events: list[Any]) -> Response:
    assert events[-1].type in ("response.completed", "response.incomplete", "response.failed")
    return Response.model_validate(events[-1].response.model_dump())


def kinds(events: list[Any]) -> list[str]:
    return [e.type for e in events]


def test_a_text_stream_is_the_responses_event_sequence() -> None:
    events = run(
        [
            chunk({"role": "assistant", "content": ""}),
            chunk({"content": "Hel"}),
            chunk({"content": "lo"}),
            chunk({}, "stop"),
            usage_chunk(),
        ]
    )

    assert [type(e) for e in events] == [
        ResponseCreatedEvent,
        ResponseInProgressEvent,
        ResponseOutputItemAddedEvent,
        ResponseContentPartAddedEvent,
        ResponseTextDeltaEvent,
        ResponseTextDeltaEvent,
        ResponseTextDoneEvent,
        ResponseContentPartDoneEvent,
        ResponseOutputItemDoneEvent,
        ResponseCompletedEvent,
    ]
    assert events[0].response.status == "in_progress" and events[0].response.output == []
    assert [e.delta for e in events if e.type == "response.output_text.delta"] == ["Hel", "lo"]
    item_id = events[2].item.id
    assert {e.item_id for e in events[3:8]} == {item_id}
    assert events[6].text == "Hello" and events[8].item.status == "completed"
    response = final(events)
    assert response.status == "completed" and response.output_text == "Hello"
    assert response.id == events[0].response.id and response.model == "up-model"
    assert response.usage is not None and response.usage.output_tokens == 5


def test_a_function_call_streams_its_arguments_then_the_answer_holds_it() -> None:
    events = run(
        [
            tool(0, "", "call_1", "shell"),
            tool(0, '{"cmd":'),
            tool(0, '"ls"}'),
            chunk({}, "tool_calls"),
        ],
        [SHELL],
    )

    added = events[2]
    assert added.type == "response.output_item.added" and added.item.type == "function_call"
    assert added.item.arguments == "" and added.item.call_id == "call_1"
    deltas = [e.delta for e in events if e.type == "response.function_call_arguments.delta"]
    assert deltas == ['{"cmd":', '"ls"}']
    done = next(e for e in events if e.type == "response.function_call_arguments.done")
    assert done.arguments == '{"cmd":"ls"}'
    (item,) = final(events).output
    assert (item.type, item.name, item.call_id, item.arguments) == (
        "function_call",
        "shell",
        "call_1",
        '{"cmd":"ls"}',
    )


def test_an_apply_patch_call_streams_as_a_custom_tool_call_with_the_patch_text() -> None:
    """GW-21: Codex's freeform apply_patch gets its patch as input, not JSON arguments."""
    arguments = json.dumps({"input": PATCH})
    pieces = [arguments[:10], arguments[10:30], arguments[30:]]
    events = run(
        [
            tool(0, pieces[0], "call_p", "apply_patch"),
            tool(0, pieces[1]),
            tool(0, pieces[2]),
            chunk({}, "tool_calls"),
        ],
        [SHELL, APPLY_PATCH],
    )

    assert "response.function_call_arguments.delta" not in kinds(events)
    added = next(e for e in events if e.type == "response.output_item.added")
    assert added.item.type == "custom_tool_call" and added.item.input == ""
    delta = next(e for e in events if e.type == "response.custom_tool_call_input.delta")
    done = next(e for e in events if e.type == "response.custom_tool_call_input.done")
    assert delta.delta == PATCH and done.input == PATCH
    (item,) = final(events).output
    assert (item.type, item.name, item.call_id, item.input) == (
        "custom_tool_call",
        "apply_patch",
        "call_p",
        PATCH,
    )


def test_parallel_calls_may_interleave_and_each_keeps_its_own_arguments() -> None:
    events = run(
        [
            tool(0, '{"a"', "c0", "shell"),
            tool(1, '{"b"', "c1", "shell"),
            tool(0, ":1}"),
            tool(1, ":2}"),
            chunk({}, "tool_calls"),
        ],
        [SHELL],
    )

    output = final(events).output
    assert [(i.call_id, i.arguments) for i in output] == [("c0", '{"a":1}'), ("c1", '{"b":2}')]


def test_a_new_call_id_at_an_open_index_is_another_call() -> None:
    """Some servers number every tool call 0."""
    events = run(
        [tool(0, "{}", "c0", "shell"), tool(0, '{"x":1}', "c1", "shell"), chunk({}, "tool_calls")],
        [SHELL],
    )

    assert [(i.call_id, i.arguments) for i in final(events).output] == [
        ("c0", "{}"),
        ("c1", '{"x":1}'),
    ]


def test_text_after_calls_closes_them_and_a_late_fragment_is_an_upstream_error() -> None:
    stream = ResponsesStream({"model": "m", "input": "x", "tools": [SHELL]}, "up")
    frames = stream.feed(tool(0, "{}", "c0", "shell")) + stream.feed(chunk({"content": "ok"}))

    assert b"response.output_item.done" in b"".join(frames)
    with pytest.raises(UpstreamError):
        stream.feed(tool(0, '{"more":1}'))


def test_reasoning_streams_as_a_summary_before_the_message() -> None:
    events = run(
        [
            chunk({"reasoning_content": "Let me "}),
            chunk({"reasoning_content": "think."}),
            chunk({"content": "42"}),
            chunk({}, "stop"),
        ]
    )

    assert kinds(events)[2:8] == [
        "response.output_item.added",
        "response.reasoning_summary_part.added",
        "response.reasoning_summary_text.delta",
        "response.reasoning_summary_text.delta",
        "response.reasoning_summary_text.done",
        "response.reasoning_summary_part.done",
    ]
    assert events[2].item.type == "reasoning" and events[3].summary_index == 0
    assert events[6].text == "Let me think."
    reasoning, message = final(events).output
    assert reasoning.summary[0].text == "Let me think." and message.content[0].text == "42"


def test_the_reasoning_field_streams_too_and_is_never_doubled() -> None:
    events = run(
        [
            chunk({"reasoning": "Hm."}),
            chunk({"reasoning": "x", "reasoning_content": "x"}),
            chunk({"content": "ok"}),
            chunk({}, "stop"),
        ]
    )

    assert final(events).output[0].summary[0].text == "Hm.x"


def test_without_a_usage_chunk_the_response_has_no_usage() -> None:
    body = {"model": "m", "input": "x"}
    stream = ResponsesStream(body, "up")
    frames = stream.feed(chunk({"content": "a"})) + stream.feed(chunk({}, "stop"))
    assert stream.usage is None
    frames += stream.feed(usage_chunk()) + stream.finish()

    assert stream.usage == USAGE
    assert final(check(frames, {"tools": []})).usage is not None
    bare = run([chunk({"content": "a"}), chunk({}, "stop")])
    assert final(bare).usage is None


def test_running_out_of_tokens_ends_with_response_incomplete() -> None:
    events = run([chunk({"content": "Once upon"}), chunk({}, "length"), usage_chunk()])

    assert events[-1].type == "response.incomplete"
    response = final(events)
    assert response.status == "incomplete" and response.incomplete_details is not None
    assert response.incomplete_details.reason == "max_output_tokens"
    assert response.output[0].status == "incomplete"


def test_an_empty_stream_still_opens_and_completes() -> None:
    events = run([])

    assert kinds(events) == ["response.created", "response.in_progress", "response.completed"]
    assert final(events).output == []


def test_a_failure_midway_is_response_failed_with_the_items_finished_so_far() -> None:
    body: JSON = {"model": "m", "input": "x", "tools": []}
    stream = ResponsesStream(body, "up")
    frames = stream.feed(chunk({"reasoning_content": "hm"})) + stream.feed(chunk({"content": "a"}))
    frames += split(stream.failed("upstream went away", "upstream_stream_error"))
    events = check(frames, body)

    response = final(events)
    assert events[-1].type == "response.failed" and response.status == "failed"
    assert response.error is not None and response.error.message == "upstream went away"
    assert response.error.code == "server_error"  # a code clients do not know
    assert [i.type for i in response.output] == ["reasoning"]
    assert stream.finish() == []


def test_a_failure_before_any_chunk_opens_the_response_first() -> None:
    body: JSON = {"model": "m", "input": "x", "tools": []}
    events = check(
        split(ResponsesStream(body, "up").failed("slow down", "rate_limit_exceeded")), body
    )

    assert kinds(events) == ["response.created", "response.in_progress", "response.failed"]
    error = final(events).error
    assert error is not None and error.code == "rate_limit_exceeded"


def test_finish_twice_sends_the_end_once() -> None:
    stream = ResponsesStream({"model": "m", "input": "x"}, "up")
    stream.feed(chunk({"content": "a"}))

    assert stream.finish()[-1].startswith(b"event: response.completed")
    assert stream.finish() == []


def test_a_local_shell_call_arrives_whole_as_a_local_shell_call() -> None:
    arguments = json.dumps({"command": ["ls", "-a"], "workdir": "/repo"})
    events = run(
        [
            tool(0, arguments[:9], "s1", "local_shell"),
            tool(0, arguments[9:]),
            chunk({}, "tool_calls"),
        ],
        [{"type": "local_shell"}],
    )

    (item,) = final(events).output
    assert item.type == "local_shell_call" and item.call_id == "s1"
    assert item.action.command == ["ls", "-a"] and item.action.working_directory == "/repo"


def test_a_streamed_refusal_is_a_refusal_part_after_the_text() -> None:
    events = run([chunk({"content": "Well"}), chunk({"refusal": "I can't."}), chunk({}, "stop")])

    assert "response.refusal.delta" in kinds(events) and "response.refusal.done" in kinds(events)
    (message,) = final(events).output
    assert [p.type for p in message.content] == ["output_text", "refusal"]
    assert message.content[1].refusal == "I can't."
