"""A streamed answer put back together: text pieces in order, tool calls from deltas split
across chunks (as providers send them), usage from the last chunk; [DONE] and comments skipped."""

from __future__ import annotations

import orjson

from nerve.assistant.streaming import _Assembly, _chunks


def frame(*chunks: dict[str, object]) -> bytes:
    return b"".join(b"data: " + orjson.dumps(c) + b"\n\n" for c in chunks)


def test_tool_calls_split_across_chunks_are_assembled_in_order() -> None:
    def delta(**d: object) -> dict[str, object]:
        return {"choices": [{"index": 0, "delta": d}]}

    def call(index: int, **fields: object) -> dict[str, object]:
        return delta(tool_calls=[{"index": index, **fields}])

    end = {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
           "usage": {"total_tokens": 9}}  # fmt: skip
    frames = [
        frame(delta(content="Let me "), delta(content="look.")),
        frame(call(1, id="b", function={"name": "memo"})),
        frame(call(0, id="a", function={"name": "look_", "arguments": '{"wh'})),
        frame(call(0, function={"name": "up", "arguments": 'at": 1}'})),
        b": keepalive\n\n" + frame(end) + b"data: [DONE]\n\n",
    ]
    assembly = _Assembly()
    shown = [assembly.add(c) for f in frames for c in _chunks(f)]
    assert "".join(shown) == "Let me look."
    answer = assembly.completion()
    message = answer["choices"][0]["message"]
    assert message["content"] == "Let me look."
    assert [c["id"] for c in message["tool_calls"]] == ["a", "b"]
    assert message["tool_calls"][0]["function"] == {"name": "look_up", "arguments": '{"what": 1}'}
    assert answer["choices"][0]["finish_reason"] == "tool_calls"
    assert answer["usage"] == {"total_tokens": 9}


def test_an_answer_with_no_text_has_no_content() -> None:
    assembly = _Assembly()
    assembly.add({"choices": [{"index": 0, "delta": {"role": "assistant"}}]})
    assert assembly.completion() == {
        "choices": [{"message": {"role": "assistant", "content": None}, "finish_reason": None}]
    }
