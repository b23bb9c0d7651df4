"""The tool-call guard on chat completion streams (SPEC TP-1).

Streams are the fake upstream's (the real API's chunk shapes); what comes out is parsed with the
openai SDK's ChatCompletionChunk and accumulated by its ChatCompletionStreamState, which is what
clients do with a stream.
"""

from __future__ import annotations

import json

from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from nerve.gateway.guard.sse import split_events
from tests.fakes import openai_wire
from tests.fakes.upstream import Reply
from tests.guard.calls import DANGER, HARMLESS, JSON, call, guard, joined, run


def frames(*calls: JSON, text: list[str] | None = None, usage: bool = False) -> list[bytes]:
    reply = Reply(tool_calls=list(calls), chunks=text)
    return [f for _, f in openai_wire.stream_events(reply, "m", "chatcmpl-1", include_usage=usage)]


def completion(blob: bytes) -> tuple[ChatCompletion, list[bytes]]:
    """The SDK's accumulation of a stream, and its comment lines."""
    events, rest = split_events(blob)
    assert rest == b""
    state = ChatCompletionStreamState()
    comments = []
    done = False
    for event in events:
        if event.startswith(b":"):
            comments += event.strip().split(b"\n")
            continue
        assert event.startswith(b"data: ") and not done
        data = event[6:].strip()
        if data == b"[DONE]":
            done = True
            continue
        state.handle_chunk(ChatCompletionChunk.model_validate_json(data))
    assert done
    return state.get_final_completion(), comments


async def test_a_stream_with_harmless_calls_is_unchanged_to_the_byte() -> None:
    stream = frames(call("Bash", HARMLESS), call("get_weather", {"city": "Oslo"}, 1),
                    text=["Let ", "me see."], usage=True)  # fmt: skip
    for mode in ("block", "flag"):
        outs, flt = await run(guard(mode), "chat", stream)
        assert joined(outs) == b"".join(stream)
        assert flt.blocked == [] and flt.flagged == [] and flt.error is None


async def test_text_is_never_delayed_and_a_call_waits_until_it_is_complete() -> None:
    stream = frames(call("Bash", HARMLESS), text=["Hel", "lo"])
    outs, _ = await run(guard(), "chat", stream)
    # role, two text deltas: out at once; the call's head and three argument pieces: held
    assert outs[:3] == [[f] for f in stream[:3]]
    assert outs[3:7] == [[], [], [], []]
    assert outs[7] == [b"".join(stream[3:8])]  # released with the finish chunk that ends it
    assert outs[8:] == [[stream[8]], []]


async def test_a_dangerous_call_is_replaced_by_text_and_the_finish_reason_becomes_stop() -> None:
    outs, flt = await run(guard(), "chat", frames(call("Bash", DANGER), text=["On it."]))
    final, comments = completion(joined(outs))
    choice = final.choices[0]
    assert choice.finish_reason == "stop" and not choice.message.tool_calls
    assert choice.message.content == (
        'On it.\n\nnerve blocked the tool call Bash {"command": "rm -rf ~"}: '
        "rm deletes a home directory (~) recursively"
    )
    assert [(j.tool, j.risk) for j in flt.blocked] == [("Bash", "critical")]
    assert comments == [b": x-nerve-guard blocked Bash rm deletes a home directory (~) recursively"]
    assert b"rm -rf" not in joined(outs).split(b"nerve blocked")[0]  # no fragment went out


async def test_of_several_calls_only_the_blocked_one_goes_and_the_rest_are_renumbered() -> None:
    stream = frames(call("Bash", HARMLESS), call("execute_sql", {"sql": "DROP DATABASE prod"}, 1),
                    call("Bash", {"command": "git status"}, 2))  # fmt: skip
    outs, flt = await run(guard(), "chat", stream)
    final, _ = completion(joined(outs))
    calls = final.choices[0].message.tool_calls or []
    assert [(c.id, json.loads(c.function.arguments)) for c in calls] == [  # type: ignore[union-attr]
        ("call_0", HARMLESS), ("call_2", {"command": "git status"})
    ]  # fmt: skip
    assert final.choices[0].finish_reason == "tool_calls"
    assert "DROP DATABASE" in (final.choices[0].message.content or "")
    assert [j.call_id for j in flt.blocked] == ["call_1"]
    assert stream[3] in joined(outs)  # an allowed call's frames go out as they came


async def test_flag_mode_changes_nothing_but_adds_a_comment_before_done() -> None:
    stream = frames(call("Bash", DANGER), usage=True)
    outs, flt = await run(guard("flag"), "chat", stream)
    note = b": x-nerve-guard flagged Bash rm deletes a home directory (~) recursively\n\n"
    assert joined(outs) == b"".join(stream[:-1]) + note + stream[-1]
    assert all(len(out) <= 1 for out in outs) and [j.tool for j in flt.flagged] == ["Bash"]
    assert outs[1:4] == [[f] for f in stream[1:4]]  # nothing is held in flag mode


async def test_a_frame_holding_many_events_and_frames_cut_anywhere_work_alike() -> None:
    stream = frames(call("Bash", HARMLESS), call("Bash", DANGER, 1), text=["Hi"])
    blob = b"".join(stream)
    whole, _ = await run(guard(), "chat", [blob])
    cut, _ = await run(guard(), "chat", [blob[i : i + 7] for i in range(0, len(blob), 7)])
    one_by_one, _ = await run(guard(), "chat", stream)
    assert joined(whole) == joined(cut) == joined(one_by_one)
    final, _ = completion(joined(whole))
    assert [c.id for c in final.choices[0].message.tool_calls or []] == ["call_0"]
    harmless = b"".join(frames(call("Bash", HARMLESS), text=["Hi"]))
    cut, _ = await run(guard(), "chat", [harmless[i : i + 5] for i in range(0, len(harmless), 5)])
    assert joined(cut) == harmless


async def test_a_whole_call_in_one_chunk_with_its_finish_reason_is_judged() -> None:
    calls = [
        {"index": i, "id": i_d, "type": "function",
         "function": {"name": "bash", "arguments": json.dumps({"command": command})}}
        for i, (i_d, command) in enumerate([("a", "rm -rf /"), ("b", "pwd")])
    ]  # fmt: skip
    delta = {"role": "assistant", "tool_calls": calls}
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
             "choices": [{"index": 0, "finish_reason": "tool_calls", "delta": delta}]}  # fmt: skip
    stream = [openai_wire.sse(chunk), b"data: [DONE]\n\n"]
    outs, flt = await run(guard(), "chat", stream)
    final, _ = completion(joined(outs))
    assert [c.id for c in final.choices[0].message.tool_calls or []] == ["b"]
    assert final.choices[0].finish_reason == "tool_calls" and len(flt.blocked) == 1
    sent = json.loads(joined(outs).split(b"\n\n")[0][6:])
    assert [(c["id"], c["index"]) for c in sent["choices"][0]["delta"]["tool_calls"]] == [("b", 0)]


async def test_malformed_streamed_arguments_are_judged_on_what_can_be_read() -> None:
    stream = frames(call("Bash", '{"command": "rm -rf ~"'), call("Bash", "{{{", 1))
    outs, flt = await run(guard(), "chat", stream)
    final, _ = completion(joined(outs))
    assert [c.id for c in final.choices[0].message.tool_calls or []] == ["call_1"]
    assert len(flt.blocked) == 1 and flt.error is None


async def test_a_call_cut_off_by_the_end_of_the_stream_is_withheld_in_block_mode() -> None:
    stream = frames(call("Bash", HARMLESS))[:4]  # role, head, two argument pieces: no end
    outs, flt = await run(guard(), "chat", stream)
    blob = joined(outs)
    assert blob.startswith(stream[0]) and b"ls -la" not in blob
    final, comments = completion(blob + b"data: [DONE]\n\n")
    assert not final.choices[0].message.tool_calls
    assert final.choices[0].message.content == (
        "nerve blocked the tool call Bash: the stream ended before this tool call was complete"
    )
    assert comments == [
        b": x-nerve-guard blocked Bash the stream ended before this tool call was complete"
    ]
    assert flt.blocked[0].reason == "the stream ended before this tool call was complete"
    outs, flt = await run(guard("flag"), "chat", stream)
    assert joined(outs) == b"".join(stream) and flt.flagged == []


async def test_a_fragment_for_a_call_already_judged_fails_safe() -> None:
    stream = frames(call("Bash", HARMLESS), call("Bash", {"command": "pwd"}, 1))
    late = openai_wire.sse({"id": "c", "object": "chat.completion.chunk", "created": 1,
                            "model": "m", "choices": [{"index": 0, "finish_reason": None,
                            "delta": {"tool_calls": [{"index": 0, "function": {
                                "arguments": "; rm -rf ~"}}]}}]})  # fmt: skip
    tampered = [*stream[:6], late, *stream[6:]]
    outs, flt = await run(guard(), "chat", tampered)
    blob = joined(outs)
    assert blob.endswith(b'"code":"guard_error"}}\n\n') and b"rm -rf" not in blob
    assert flt.error is not None and "continued after it was judged" in flt.error
    outs, flt = await run(guard("flag"), "chat", tampered)
    assert joined(outs) == b"".join(tampered) and flt.error is not None


async def test_guard_off_passes_every_frame_as_it_is() -> None:
    stream = frames(call("Bash", DANGER))
    outs, flt = await run(guard("off"), "chat", stream)
    assert outs[:-1] == [[f] for f in stream] and flt.blocked == []


async def test_calls_a_server_numbers_all_zero_are_told_apart_by_their_ids() -> None:
    def piece(call_id: str | None, name: str | None, arguments: str) -> bytes:
        fragment: JSON = {"index": 0, "function": {"arguments": arguments}}
        if call_id:
            fragment.update(id=call_id, type="function")
            fragment["function"]["name"] = name
        choice = {"index": 0, "finish_reason": None, "delta": {"tool_calls": [fragment]}}
        return openai_wire.sse({"id": "c", "object": "chat.completion.chunk", "created": 1,
                                "model": "m", "choices": [choice]})  # fmt: skip

    calls = [piece("a", "Bash", '{"command": '), piece(None, None, '"pwd"}'),
             piece("b", "Bash", '{"command": '), piece(None, None, '"rm -rf ~"}')]  # fmt: skip
    stream = [*frames()[:1], *calls, *frames()[-2:]]
    outs, flt = await run(guard(), "chat", stream)
    assert [j.call_id for j in flt.blocked] == ["b"] and flt.error is None
    final, _ = completion(joined(outs))
    assert [c.id for c in final.choices[0].message.tool_calls or []] == ["a"]
