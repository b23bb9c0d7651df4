"""The response cache's parts (SPEC OB-2): the entry codec refuses anything it did not write
whole, the tool-call test finds every wire's calls (whole and streamed), and the key changes
with everything that changes the answer and nothing else."""

from __future__ import annotations

import json

import orjson
import pytest

from nerve.gateway.cache import cache_key, cache_view
from nerve.gateway.cache_entry import (
    BadEntry,
    Entry,
    calls_tools,
    decode,
    encode,
    frame_calls_tools,
)
from nerve.gateway.stats import Usage

KEY = "a" * 64
ENTRY = Entry("sse", b"data: {}\n\ndata: [DONE]\n\n", {"x-nerve-route": "default"},
              Usage(11, 7, 2, 18), created=1000.0, expires=4600.0)  # fmt: skip


def test_an_entry_round_trips():
    assert decode(KEY, encode(KEY, ENTRY), now=2000, max_bytes=1 << 20) == ENTRY
    bare = Entry("json", b"{}", {}, None, 1.0, 2.0)
    assert decode(KEY, encode(KEY, bare), now=1.5, max_bytes=1024) == bare


@pytest.mark.parametrize(
    ("spoil", "why"),
    [
        (lambda v: v[:-1], "checksum"),
        (lambda v: v[:20], "not a version-1"),
        (lambda v: b"NVC0" + v[4:], "not a version-1"),
        (lambda v: v[:-2] + b"!" + v[-1:], "checksum"),
        (lambda v: b"", "not a version-1"),
        (lambda v: v + b"x" * (1 << 21), "over max_entry_bytes"),
    ],
)
def test_a_spoilt_value_is_refused_with_the_reason(spoil, why):
    with pytest.raises(BadEntry, match=why):
        decode(KEY, spoil(encode(KEY, ENTRY)), now=2000, max_bytes=1 << 20)


def test_another_keys_or_an_expired_entry_is_refused():
    with pytest.raises(BadEntry, match="another key"):
        decode("b" * 64, encode(KEY, ENTRY), now=2000, max_bytes=1 << 20)
    with pytest.raises(BadEntry, match="expired"):
        decode(KEY, encode(KEY, ENTRY), now=4600, max_bytes=1 << 20)


def test_a_value_with_a_good_checksum_and_bad_meta_is_refused():
    """Written by something else that knew the layout: every field is still checked."""
    import hashlib
    import struct

    meta = orjson.dumps({"key": KEY, "kind": "json", "headers": [], "usage": None})
    rest = struct.pack(">I", len(meta)) + meta
    with pytest.raises(BadEntry, match="unreadable meta"):
        decode(KEY, b"NVC1" + hashlib.sha256(rest).digest() + rest, now=0, max_bytes=1024)


def sse(data: dict, event: str | None = None) -> bytes:
    head = f"event: {event}\n".encode() if event else b""
    return head + b"data: " + json.dumps(data).encode() + b"\n\n"


CHAT_CALL = {"choices": [{"index": 0, "message": {"role": "assistant", "content": None,
             "tool_calls": [{"id": "c", "type": "function",
                             "function": {"name": "f", "arguments": "{}"}}]},
             "finish_reason": "tool_calls"}]}  # fmt: skip
CHAT_TEXT = {"choices": [{"index": 0, "message": {"role": "assistant",
             "content": 'she wrote "tool_calls" and "function_call" in text'},
             "finish_reason": "stop"}]}  # fmt: skip


@pytest.mark.parametrize(
    ("wire", "answer", "calls"),
    [
        ("chat", CHAT_CALL, True),
        ("chat", CHAT_TEXT, False),
        ("chat", {"choices": [{"message": {"tool_calls": []}, "finish_reason": "stop"}]}, False),
        ("messages", {"content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}],
                      "stop_reason": "tool_use"}, True),
        ("messages", {"content": [{"type": "text", "text": "no tool_use here"}],
                      "stop_reason": "end_turn"}, False),
        ("messages", {"content": [{"type": "server_tool_use", "name": "web_search"}]}, True),
        ("responses", {"output": [{"type": "function_call", "name": "f"}]}, True),
        ("responses", {"output": [{"type": "custom_tool_call", "name": "apply_patch"}]}, True),
        ("responses", {"output": [{"type": "message", "content": [
            {"type": "output_text", "text": "a function_call"}]}]}, False),
    ],
)  # fmt: skip
def test_whole_answers_with_tool_calls_are_found(wire, answer, calls):
    assert calls_tools(wire, orjson.dumps(answer)) is calls


def test_an_answer_that_cannot_be_read_counts_as_a_tool_call():
    assert calls_tools("chat", b'{"choices": [{"tool_calls": ') is True
    assert calls_tools("chat", b'{"choices": []}') is False
    assert calls_tools(None, b'{"tool_calls": [1]}') is False  # embeddings, completions


@pytest.mark.parametrize(
    ("wire", "frame", "calls"),
    [
        ("chat", sse({"choices": [{"delta": {"content": "hi"}}]}), False),
        ("chat", sse({"choices": [{"delta": {"tool_calls": [{"index": 0}]}}]}), True),
        ("chat", sse({"choices": [{"delta": {}, "finish_reason": "tool_calls"}]}), True),
        ("chat", sse({"choices": [{"delta": {"content": '"tool_calls"'}}]}), False),
        ("chat", sse({"choices": [{"delta": {"content": "a"}}]})
         + sse({"choices": [{"delta": {"function_call": {"name": "f"}}}]}), True),
        ("messages", sse({"type": "content_block_start", "index": 1,
                          "content_block": {"type": "tool_use", "name": "Bash"}},
                         "content_block_start"), True),
        ("messages", sse({"type": "content_block_delta", "index": 0,
                          "delta": {"type": "text_delta", "text": "tool_use"}},
                         "content_block_delta"), False),
        ("messages", sse({"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
                         "message_delta"), True),
        ("responses", sse({"type": "response.output_item.added",
                           "item": {"type": "function_call", "name": "shell"}}), True),
        ("responses", sse({"type": "response.function_call_arguments.delta", "delta": "{"}),
         True),
        ("responses", sse({"type": "response.output_text.delta", "delta": "a function_call"}),
         False),
        ("chat", b"data: [DONE]\n\n", False),
        ("chat", b'data: {"choices": [{"delta": {"tool_calls', True),  # unreadable: a call
    ],
)  # fmt: skip
def test_stream_frames_with_tool_calls_are_found(wire, frame, calls):
    assert frame_calls_tools(wire, frame) is calls


BODY = {"model": "auto", "messages": [{"role": "user", "content": "hi"}], "temperature": 0}


def key(tenant="config:a", endpoint="chat completions", target="p/m", stream=False, body=None,
        headers=None) -> str:  # fmt: skip
    return cache_key(tenant, endpoint, target, stream, body or BODY, headers or {})


def test_the_key_changes_with_whatever_changes_the_answer():
    base = key()
    others = [
        key(tenant="config:b"),
        key(tenant="managed:a"),
        key(endpoint="Anthropic Messages"),
        key(target="p/other"),
        key(stream=True),
        key(body={**BODY, "max_tokens": 5}),
        key(body={**BODY, "messages": [{"role": "user", "content": "hi!"}]}),
        key(headers={"anthropic-beta": "context-1m"}),
    ]
    assert base not in others and len(set(others)) == len(others)


def test_the_key_ignores_key_order_the_stream_field_and_headers_not_forwarded():
    reordered = json.loads(json.dumps(dict(reversed(list(BODY.items())))))
    assert key(body=reordered) == key()
    assert key(body={**BODY, "stream": False}) == key()  # the flag is keyed on its own
    assert key(headers={"user-agent": "x", "cache-control": "no-store"}) == key()


def test_an_unwritable_body_raises_type_error_for_the_caller_to_skip():
    with pytest.raises(TypeError):
        key(body={**BODY, "seed": 1 << 70})


def test_the_stats_view_reads_the_shared_counters():
    view = cache_view({"hit": 3, "miss": 1, "skip": 2, "stored": 1, "not_stored:tool_calls": 4,
                       "tokens_saved": 54, "saved_usd_nano": 54_000_000})  # fmt: skip
    assert view["hit_rate"] == 0.75 and view["not_stored"] == {"tool_calls": 4}
    assert view["cost_saved_usd"] == pytest.approx(0.054) and view["skips"] == 2
    assert cache_view({})["hit_rate"] is None
