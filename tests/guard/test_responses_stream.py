"""The tool-call guard on OpenAI Responses streams (SPEC TP-1).

Streams come from the fake Responses upstream (the real API's events) and from nerve's own
chat -> Responses translation (custom tools: Codex's apply_patch); what comes out is parsed with
the openai SDK's ResponseStreamEvent union and fed to its ResponseStreamState, which refuses
events out of order or items that change; sequence numbers must stay consecutive.
"""

from __future__ import annotations

import json
from typing import Any

import openai
from openai.lib.streaming.responses import ResponseStreamState
from openai.types.responses import Response, ResponseStreamEvent
from pydantic import TypeAdapter

from nerve.gateway.dialects.responses_wire import ResponsesStream
from nerve.gateway.guard.sse import split_events
from tests.fakes import responses_wire
from tests.fakes.upstream import Reply
from tests.guard.calls import JSON, call, guard, joined, run

EVENTS: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)
DANGER = {"command": ["bash", "-lc", "rm -rf ~"]}
HARMLESS = {"command": ["bash", "-lc", "ls -la"]}
GRAMMAR = 'start: "*** Begin Patch" /(.|\\n)*/ "*** End Patch"'
APPLY_PATCH = {
    "type": "custom",
    "name": "apply_patch",
    "description": "Edit files.",
    "format": {"type": "grammar", "syntax": "lark", "definition": GRAMMAR},
}
DELETE_PASSWD = "*** Begin Patch\n*** Delete File: /etc/passwd\n*** End Patch"
ADD_FILE = '*** Begin Patch\n*** Add File: hi.txt\n+héllo "x"\n*** End Patch'


def upstream(*calls: JSON, text: list[str] | None = None) -> list[bytes]:
    reply = Reply(tool_calls=list(calls), chunks=text)
    frames = [f for _, f in responses_wire.stream_events(reply, "gpt-x", "r1")]
    # the fake's usage lacks a field this SDK version requires
    fix = (b'"input_tokens_details":{"cached_tokens":0}',
           b'"input_tokens_details":{"cached_tokens":0,"cache_write_tokens":0}')  # fmt: skip
    return [f.replace(*fix) for f in frames]


def translated(tools: list[JSON], *calls: tuple[str, str], text: str = "") -> list[bytes]:
    """nerve's chat -> Responses stream of an answer making `calls` (name, JSON arguments)."""
    stream = ResponsesStream({"model": "gpt-5-codex", "input": "hi", "tools": tools}, "up")

    def chunk(delta: JSON, finish: str | None = None) -> JSON:
        return {"id": "c", "model": "up", "choices": [{"index": 0, "delta": delta,
                                                       "finish_reason": finish}]}  # fmt: skip

    out = stream.feed(chunk({"content": text})) if text else []
    for i, (name, arguments) in enumerate(calls):
        head = {"index": i, "id": f"call_{i}", "function": {"name": name, "arguments": ""}}
        out += stream.feed(chunk({"tool_calls": [head]}))
        for k in range(0, len(arguments), 5):
            piece = {"index": i, "function": {"arguments": arguments[k : k + 5]}}
            out += stream.feed(chunk({"tool_calls": [piece]}))
    out += stream.feed(chunk({}, "tool_calls"))
    return out + stream.finish()


def check(blob: bytes, tools: list[JSON] | None = None) -> tuple[Response, list[bytes]]:
    """Every event through the SDK; the final Response, checked against what streamed."""
    events, rest = split_events(blob)
    assert rest == b""
    state = ResponseStreamState(input_tools=tools or [], text_format=openai.omit)
    parsed, comments = [], []
    for event in events:
        if event.startswith(b":"):
            comments += event.strip().split(b"\n")
            continue
        head, _, data = event.strip().partition(b"\n")
        one = EVENTS.validate_json(data[len(b"data: ") :])
        assert head == b"event: " + one.type.encode()
        state.handle_event(one)
        parsed.append(one)
    assert [e.sequence_number for e in parsed] == list(range(len(parsed)))
    final = Response.model_validate(parsed[-1].response.model_dump())
    streamed = [e.item.model_dump() for e in parsed if e.type == "response.output_item.done"]
    assert [i.model_dump() for i in final.output] == streamed  # the final output agrees
    return final, comments


async def test_a_stream_with_harmless_calls_is_unchanged_to_the_byte() -> None:
    streams = [
        upstream(call("shell", HARMLESS), call("get_weather", {"c": 1}, 1), text=["Hi", "!"]),
        translated([APPLY_PATCH], ("apply_patch", json.dumps({"input": ADD_FILE}))),
    ]
    for stream in streams:
        for mode in ("block", "flag"):
            outs, flt = await run(guard(mode), "responses", stream)
            assert joined(outs) == b"".join(stream)
            assert flt.blocked == [] and flt.flagged == []


async def test_text_goes_out_at_once_and_a_call_waits_for_its_item_to_be_done() -> None:
    stream = upstream(call("shell", HARMLESS), text=["Hi", "!"])
    types = [f.split(b"\n")[0].removeprefix(b"event: ").decode() for f in stream]
    added = types.index("response.output_item.added", 3)  # the call's (the message's is first)
    done = types.index("response.output_item.done", added)
    outs, _ = await run(guard(), "responses", stream)
    assert outs[:added] == [[f] for f in stream[:added]]
    assert all(out == [] for out in outs[added:done])
    assert outs[done] == [b"".join(stream[added : done + 1])]


async def test_a_blocked_call_becomes_a_message_item_in_its_place() -> None:
    stream = upstream(call("shell", HARMLESS), call("shell", DANGER, 1), text=["Plan."])
    outs, flt = await run(guard(), "responses", stream)
    final, comments = check(joined(outs))
    assert [i.type for i in final.output] == ["message", "function_call", "message"]
    assert final.output[2].id == "msg_nerve_fc_r1_1"
    assert final.output_text == (
        'Plan.nerve blocked the tool call shell {"command": ["bash", "-lc", "rm -rf ~"]}: '
        "rm deletes a home directory (~) recursively"
    )
    assert [j.call_id for j in flt.blocked] == ["call_1"]
    assert comments == [
        b": x-nerve-guard blocked shell rm deletes a home directory (~) recursively"
    ]


async def test_a_blocked_call_first_of_several_renumbers_the_events_after_it() -> None:
    stream = upstream(call("shell", DANGER), call("shell", HARMLESS, 1))
    outs, _ = await run(guard(), "responses", stream)
    final, _ = check(joined(outs))  # sequence numbers consecutive, output consistent
    assert [i.type for i in final.output] == ["message", "function_call"]


async def test_a_custom_apply_patch_deleting_a_system_file_is_blocked() -> None:
    stream = translated([APPLY_PATCH], ("apply_patch", json.dumps({"input": DELETE_PASSWD})),
                        text="Cleaning up.")  # fmt: skip
    assert b"custom_tool_call_input.delta" in b"".join(stream)
    outs, flt = await run(guard(), "responses", stream)
    final, _ = check(joined(outs), [APPLY_PATCH])
    assert [i.type for i in final.output] == ["message", "message"]
    assert "judged as `rm -f -- /etc/passwd`" in final.output_text
    assert [(j.tool, j.kind) for j in flt.blocked] == [("apply_patch", "path")]


async def test_flag_mode_changes_nothing_but_adds_a_comment_before_the_final_event() -> None:
    stream = upstream(call("shell", DANGER))
    outs, flt = await run(guard("flag"), "responses", stream)
    note = b": x-nerve-guard flagged shell rm deletes a home directory (~) recursively\n\n"
    assert joined(outs) == b"".join(stream[:-1]) + note + stream[-1]
    assert [j.tool for j in flt.flagged] == ["shell"]


async def test_frames_holding_many_events_or_cut_anywhere_give_the_same_stream() -> None:
    stream = upstream(call("shell", HARMLESS), call("shell", DANGER, 1))
    blob = b"".join(stream)
    whole, _ = await run(guard(), "responses", [blob])
    cut, _ = await run(guard(), "responses", [blob[i : i + 13] for i in range(0, len(blob), 13)])
    one_by_one, _ = await run(guard(), "responses", stream)
    assert joined(whole) == joined(cut) == joined(one_by_one)
    check(joined(whole))


async def test_a_call_the_response_ends_without_finishing_is_judged_on_the_final_output() -> None:
    stream = upstream(call("shell", DANGER))
    done = next(
        i for i, f in enumerate(stream) if f.startswith(b"event: response.output_item.done")
    )
    cut = [f for i, f in enumerate(stream) if i != done]  # the call's item is never done
    outs, flt = await run(guard(), "responses", cut)
    assert [j.tool for j in flt.blocked] == ["shell"] and b"rm -rf" not in joined(outs).split(
        b"nerve blocked")[0]  # fmt: skip


async def test_an_event_for_a_call_already_judged_fails_safe() -> None:
    stream = upstream(call("shell", HARMLESS))
    done = next(i for i, f in enumerate(stream) if f.startswith(b"event: response.output_item.do"))
    late = b'event: response.function_call_arguments.delta\ndata: {"type":"response.function_' \
        b'call_arguments.delta","sequence_number":99,"output_index":0,"item_id":"fc_r1_0",' \
        b'"delta":"; rm -rf ~"}\n\n'  # fmt: skip
    outs, flt = await run(guard(), "responses", [*stream[: done + 1], late, *stream[done + 1 :]])
    blob = joined(outs)
    assert blob.endswith(b"\n\n") and b"event: error\n" in blob and b"rm -rf" not in blob
    assert flt.error is not None and "continued after it was judged" in flt.error
    events, _ = split_events(blob)
    error = EVENTS.validate_json(events[-1].split(b"data: ", 1)[1])
    assert error.type == "error" and error.sequence_number == done + 1
