"""The tool-call guard on Anthropic Messages streams (SPEC TP-1).

Streams come from the fake Anthropic upstream (the real API's events, pings included) and from
nerve's own chat -> Messages translation; what comes out is parsed as the anthropic SDK's
RawMessageStreamEvent and accumulated by its accumulate_event, as `client.messages.stream` does.
"""

from __future__ import annotations

import json
from typing import Any

from anthropic.lib.streaming._messages import accumulate_event
from anthropic.types import Message, RawMessageStreamEvent
from pydantic import TypeAdapter

from nerve.gateway.dialects.messages_wire import MessagesStream
from nerve.gateway.guard.sse import split_events
from tests.fakes import anthropic_wire
from tests.fakes.upstream import Reply
from tests.guard.calls import DANGER, HARMLESS, JSON, call, guard, joined, run

EVENT: TypeAdapter[Any] = TypeAdapter(RawMessageStreamEvent)


def toolu(name: str, arguments: JSON, i: int = 0) -> JSON:
    return call(name, arguments, i, prefix="toolu")  # Anthropic's ids


def upstream(*calls: JSON, text: list[str] | None = None) -> list[bytes]:
    reply = Reply(tool_calls=list(calls), chunks=text)
    return [f for _, f in anthropic_wire.stream_events(reply, "claude-x", "msg_1")]


def translated(*calls: JSON, text: str = "") -> list[bytes]:
    """The same answer as nerve's chat -> Messages translation streams it."""
    stream = MessagesStream("claude-x", input_tokens=10)

    def chunk(delta: JSON, finish: str | None = None) -> JSON:
        return {"id": "c1", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    out = stream.feed(chunk({"role": "assistant", "content": text}))
    for i, c in enumerate(calls):
        head = {"index": i, "id": c["id"], "function": {"name": c["function"]["name"]}}
        out += stream.feed(chunk({"tool_calls": [head]}))
        arguments = json.dumps(c["function"]["arguments"])
        for k in range(0, len(arguments), 4):
            piece = {"index": i, "function": {"arguments": arguments[k : k + 4]}}
            out += stream.feed(chunk({"tool_calls": [piece]}))
    out += stream.feed(chunk({}, "tool_calls" if calls else "stop"))
    return out + stream.finish()


def message(blob: bytes) -> tuple[Message, list[bytes]]:
    events, rest = split_events(blob)
    assert rest == b""
    snapshot, buffers, comments = None, {}, []  # type: ignore[var-annotated]
    for event in events:
        if event.startswith(b":"):
            comments += event.strip().split(b"\n")
            continue
        head, data = event.strip().split(b"\n")
        parsed = json.loads(data[len(b"data: ") :])
        assert head == b"event: " + parsed["type"].encode()
        if parsed["type"] == "ping":
            continue  # the SDK skips pings too
        snapshot = accumulate_event(
            event=EVENT.validate_python(parsed), current_snapshot=snapshot, json_bufs=buffers
        )
    assert snapshot is not None
    return Message.model_validate(snapshot.model_dump()), comments


async def test_a_stream_with_harmless_calls_is_unchanged_to_the_byte() -> None:
    streams = [
        upstream(toolu("Bash", HARMLESS), text=["Sure", "."]),
        translated(toolu("Bash", HARMLESS), toolu("Read", {"file_path": "x"}, 1)),
    ]
    for stream in streams:
        for mode in ("block", "flag"):
            outs, flt = await run(guard(mode), "messages", stream)
            assert joined(outs) == b"".join(stream)
            assert flt.blocked == [] and flt.flagged == []


async def test_text_goes_out_at_once_and_a_tool_block_waits_for_its_stop() -> None:
    stream = upstream(toolu("Bash", HARMLESS))
    kinds = [f.split(b"\n")[0] for f in stream]
    assert kinds[:3] == [b"event: message_start", b"event: content_block_start", b"event: ping"]
    outs, _ = await run(guard(), "messages", stream)
    assert outs[0] == [stream[0]]
    stop = kinds.index(b"event: content_block_stop")
    assert all(out == [] for out in outs[1:stop])  # the ping in the block waits with it
    assert outs[stop] == [b"".join(stream[1 : stop + 1])]
    text = upstream(text=["Hel", "lo"])
    outs, _ = await run(guard(), "messages", text)
    assert outs[:-1] == [[f] for f in text]


async def test_a_blocked_tool_use_becomes_a_text_block_and_the_turn_ends() -> None:
    outs, flt = await run(guard(), "messages", upstream(toolu("Bash", DANGER), text=["On it."]))
    final, comments = message(joined(outs))
    assert [b.type for b in final.content] == ["text", "text"]
    assert final.content[1].text == (  # type: ignore[union-attr]
        'nerve blocked the tool call Bash {"command": "rm -rf ~"}: '
        "rm deletes a home directory (~) recursively"
    )
    assert final.stop_reason == "end_turn" and [j.call_id for j in flt.blocked] == ["toolu_0"]
    assert comments == [b": x-nerve-guard blocked Bash rm deletes a home directory (~) recursively"]


async def test_of_several_tool_uses_only_the_blocked_one_is_replaced() -> None:
    stream = translated(toolu("Bash", HARMLESS), toolu("execute_sql", {"sql": "DROP TABLE users"},
                        1), toolu("Bash", {"command": "pwd"}, 2), text="Plan:")  # fmt: skip
    outs, flt = await run(guard(), "messages", stream)
    final, _ = message(joined(outs))
    assert [b.type for b in final.content] == ["text", "tool_use", "text", "tool_use"]
    assert final.content[1].input == HARMLESS and final.content[3].input == {"command": "pwd"}  # type: ignore[union-attr]
    assert final.stop_reason == "tool_use" and [j.tool for j in flt.blocked] == ["execute_sql"]


async def test_flag_mode_changes_nothing_but_adds_a_comment_before_message_stop() -> None:
    stream = upstream(toolu("Bash", DANGER))
    outs, flt = await run(guard("flag"), "messages", stream)
    note = b": x-nerve-guard flagged Bash rm deletes a home directory (~) recursively\n\n"
    assert joined(outs) == b"".join(stream[:-1]) + note + stream[-1]
    assert [j.risk for j in flt.flagged] == ["critical"]


async def test_frames_holding_many_events_or_cut_anywhere_give_the_same_stream() -> None:
    stream = upstream(toolu("Bash", HARMLESS), toolu("Bash", DANGER, 1))
    blob = b"".join(stream)
    whole, _ = await run(guard(), "messages", [blob])
    cut, _ = await run(guard(), "messages", [blob[i : i + 11] for i in range(0, len(blob), 11)])
    one_by_one, _ = await run(guard(), "messages", stream)
    assert joined(whole) == joined(cut) == joined(one_by_one)
    final, _ = message(joined(whole))
    assert [b.type for b in final.content] == ["tool_use", "text"]


async def test_a_tool_use_whose_input_comes_whole_in_its_start_is_judged() -> None:
    start = {"type": "content_block_start", "index": 0, "content_block": {
        "type": "tool_use", "id": "t", "name": "Bash", "input": DANGER}}  # fmt: skip
    stream = upstream()  # message_start, a text block, message_delta, message_stop
    frames = [stream[0], anthropic_wire.sse("content_block_start", start),
              anthropic_wire.sse("content_block_stop", {"index": 0}), *stream[-2:]]  # fmt: skip
    outs, flt = await run(guard(), "messages", frames)
    assert [j.tool for j in flt.blocked] == ["Bash"]
    assert b'"name":"Bash"' not in joined(outs)


async def test_a_delta_for_a_tool_use_already_judged_fails_safe() -> None:
    stream = upstream(toolu("Bash", HARMLESS))
    stop = next(i for i, f in enumerate(stream) if f.startswith(b"event: content_block_stop"))
    late = anthropic_wire.sse("content_block_delta", {"index": 0, "delta": {
        "type": "input_json_delta", "partial_json": "; rm -rf ~"}})  # fmt: skip
    tampered = [*stream[: stop + 1], late, *stream[stop + 1 :]]
    outs, flt = await run(guard(), "messages", tampered)
    blob = joined(outs)
    assert blob.endswith(b"event: error\ndata: " + json.dumps({"type": "error", "error": {
        "type": "api_error", "message": "nerve's tool-call guard failed (GuardError); the "
        "answer was cut"}}, separators=(",", ":")).encode() + b"\n\n")  # fmt: skip
    assert b"rm -rf" not in blob and flt.error is not None
    outs, flt = await run(guard("flag"), "messages", tampered)
    assert joined(outs) == b"".join(tampered)  # flag mode never changes the stream


async def test_events_with_crlf_line_endings_are_read_alike() -> None:
    stream = [f.replace(b"\n", b"\r\n") for f in upstream(toolu("Bash", DANGER))]
    outs, flt = await run(guard(), "messages", stream)
    assert [j.tool for j in flt.blocked] == ["Bash"]
    assert b"rm -rf" not in joined(outs).split(b"nerve blocked")[0]  # only the notice says it
    harmless = [f.replace(b"\n", b"\r\n") for f in upstream(toolu("Bash", HARMLESS))]
    outs, _ = await run(guard(), "messages", harmless)
    assert joined(outs) == b"".join(harmless)
