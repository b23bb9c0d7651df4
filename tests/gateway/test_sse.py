"""The incremental SSE parser and encoder shared by both wire protocols (SPEC GW-2, GW-9)."""

from __future__ import annotations

import pytest

from nerve.gateway.providers.sse import SSEEvent, SSEParser, encode_sse

# Shaped like a real Anthropic stream: named events, a ping, non-ASCII text, a comment.
RECORDED = (
    "event: message_start\n"
    'data: {"type":"message_start","message":{"id":"msg_01","usage":{"input_tokens":12}}}\n'
    "\n"
    ": keep-alive\n"
    "\n"
    "event: ping\n"
    'data: {"type": "ping"}\n'
    "\n"
    "event: content_block_delta\n"
    'data: {"type":"content_block_delta","index":0,'
    '"delta":{"type":"text_delta","text":"Grüße नमस्ते 👋"}}\n'
    "\n"
    "event: message_stop\n"
    'data: {"type":"message_stop"}\n'
    "\n"
).encode()


def feed_in_pieces(raw: bytes, size: int) -> list[SSEEvent]:
    parser = SSEParser()
    events: list[SSEEvent] = []
    for start in range(0, len(raw), size):
        events += parser.feed(raw[start : start + size])
    return events


def test_a_recorded_stream_parses_into_its_events() -> None:
    """GW-2: every named event comes out with its JSON data; comments are skipped."""
    events = SSEParser().feed(RECORDED)

    assert [e.event for e in events] == [
        "message_start",
        "ping",
        "content_block_delta",
        "message_stop",
    ]
    assert events[1].data == '{"type": "ping"}'
    assert "Grüße नमस्ते 👋" in events[2].data


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64])
def test_feeding_byte_by_byte_or_in_any_pieces_equals_feeding_at_once(size: int) -> None:
    """GW-9: chunk boundaries, even inside a multi-byte UTF-8 character, change nothing."""
    assert feed_in_pieces(RECORDED, size) == SSEParser().feed(RECORDED)


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_every_line_ending_the_spec_allows_gives_the_same_events(newline: bytes) -> None:
    raw = RECORDED.replace(b"\n", newline)

    assert SSEParser().feed(raw) == SSEParser().feed(RECORDED)
    assert feed_in_pieces(raw, 1) == SSEParser().feed(RECORDED)


def test_a_crlf_split_between_two_feeds_is_one_line_ending() -> None:
    parser = SSEParser()

    assert parser.feed(b"data: a\r") == []
    assert parser.feed(b"\n\r") == [SSEEvent(None, "a")]
    assert parser.feed(b"\ndata: b\r\n\r\n") == [SSEEvent(None, "b")]


def test_an_event_ending_in_a_lone_cr_is_not_held_back() -> None:
    assert SSEParser().feed(b"data: x\r\r") == [SSEEvent(None, "x")]


def test_several_data_lines_join_with_newlines() -> None:
    events = SSEParser().feed(b"data: first\ndata:second\ndata\ndata:  indented\n\n")

    assert events == [SSEEvent(None, "first\nsecond\n\n indented")]


def test_the_event_name_applies_to_one_event_only() -> None:
    events = SSEParser().feed(b"event: error\ndata: 1\n\ndata: 2\n\n")

    assert events == [SSEEvent("error", "1"), SSEEvent(None, "2")]


def test_an_event_without_data_is_not_dispatched() -> None:
    """An event name alone, id and retry fields carry nothing this gateway forwards."""
    events = SSEParser().feed(b"event: ping\n\nid: 7\nretry: 100\n\ndata: [DONE]\n\n")

    assert events == [SSEEvent(None, "[DONE]")]


def test_a_leading_byte_order_mark_is_ignored_even_when_split() -> None:
    raw = b"\xef\xbb\xbfdata: x\n\n"

    assert SSEParser().feed(raw) == [SSEEvent(None, "x")]
    assert feed_in_pieces(raw, 1) == [SSEEvent(None, "x")]


def test_an_unfinished_event_waits_for_its_blank_line() -> None:
    parser = SSEParser()

    assert parser.feed(b'data: {"a":') == []
    assert parser.feed(b" 1}\n") == []
    assert parser.feed(b"\n") == [SSEEvent(None, '{"a": 1}')]


def test_invalid_utf8_is_replaced_rather_than_raised() -> None:
    assert SSEParser().feed(b"data: \xff\n\n") == [SSEEvent(None, "\ufffd")]


def test_a_long_line_fed_byte_by_byte_is_not_rescanned() -> None:
    """A 200 KB line fed one byte at a time stays linear: quadratic work would take minutes."""
    payload = b"x" * 200_000
    parser = SSEParser()
    for i in range(len(payload)):
        assert parser.feed(payload[i : i + 1]) == []

    assert parser.feed(b"\n\n") == []  # a field named "xxx...": unknown, ignored
    assert parser.feed(b"data: " + payload + b"\n\n") == [SSEEvent(None, payload.decode())]


def test_encoded_events_parse_back_to_themselves() -> None:
    cases = [("{}", None), ("line one\nline two\n", "message_delta"), ("a\r\nb\rc", None)]
    for data, event in cases:
        expected = data.replace("\r\n", "\n").replace("\r", "\n")
        assert SSEParser().feed(encode_sse(data, event)) == [SSEEvent(event, expected)]


def test_encoding_a_one_line_payload_is_a_single_data_field() -> None:
    assert encode_sse(b'{"a":1}') == b'data: {"a":1}\n\n'
    assert encode_sse("[DONE]", event="done") == b"event: done\ndata: [DONE]\n\n"


def test_an_event_name_with_a_line_break_is_refused() -> None:
    with pytest.raises(ValueError, match="line break"):
        encode_sse("x", event="a\nb")
