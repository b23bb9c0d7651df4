"""What path memory reads from traffic (SPEC TP-2): the person's question in each dialect's
request, and the answer's text from a whole body or from a stream's frames, however the frames
cut the events. Streams are the fake upstreams' wire shapes and nerve's own translations."""

from __future__ import annotations

import orjson
import pytest

from nerve.gateway.dialects.messages_wire import MessagesStream
from nerve.gateway.dialects.responses_wire import ResponsesStream
from nerve.gateway.recall_text import MAX_CHARS, TextTap, answer_text, asked
from tests.fakes import anthropic_wire, openai_wire, responses_wire
from tests.fakes.upstream import Reply

TEXT = "Your favourite editor is helix — ça marche, 好的."
CALL = [{"function": {"name": "read", "arguments": {"path": "a.py"}}}]


def frames(dialect: str, reply: Reply) -> list[bytes]:
    if dialect == "chat":
        events = openai_wire.stream_events(reply, "m1", "r1", include_usage=True)
    elif dialect == "messages":
        events = anthropic_wire.stream_events(reply, "m1", "r1")
    else:
        events = responses_wire.stream_events(reply, "m1", "r1")
    return [frame for _, frame in events]


def tapped(dialect: str, pieces: list[bytes]) -> str:
    tap = TextTap(dialect)
    for piece in pieces:
        tap.feed(piece)
    return tap.text


DIALECTS = ["chat", "messages", "responses"]


# -- the question ------------------------------------------------------------------------------


def test_a_chat_question_is_the_last_user_messages_text_parts_without_its_images():
    body = {"messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "hi"},
        {"role": "user", "content": [
            {"type": "text", "text": "what is in"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
            {"type": "text", "text": "this picture?"},
        ]},
    ]}  # fmt: skip
    found = asked("chat", body)
    assert found.text == "what is in\nthis picture?"
    assert found.fresh


def test_a_chat_tool_round_is_not_a_fresh_question_but_still_knows_it():
    body = {"messages": [
        {"role": "user", "content": "read a.py"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]},
        {"role": "tool", "tool_call_id": "c1", "content": "print('hi')"},
    ]}  # fmt: skip
    found = asked("chat", body)
    assert (found.text, found.fresh) == ("read a.py", False)


def test_a_messages_tool_result_is_not_the_persons_words_and_reminders_are_skipped():
    body = {"system": [{"type": "text", "text": "You are Claude Code."}], "messages": [
        {"role": "user", "content": [
            {"type": "text", "text": "<system-reminder>context the agent adds</system-reminder>"},
            {"type": "text", "text": "fix the login bug"},
        ]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read",
                                           "input": {"path": "login.py"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                      "content": "def login(): ..."}]},
    ]}  # fmt: skip
    found = asked("messages", body)
    assert (found.text, found.fresh) == ("fix the login bug", False)
    fresh = asked("messages", {"messages": [{"role": "user", "content": "plain words"}]})
    assert (fresh.text, fresh.fresh) == ("plain words", True)


def test_a_responses_question_from_a_string_input_or_the_last_user_item():
    assert asked("responses", {"input": "just this"}).text == "just this"
    body = {"instructions": "Be Codex.", "input": [
        {"type": "message", "role": "developer", "content": "rules"},
        {"type": "message", "role": "user",
         "content": [{"type": "input_text", "text": "run the tests"},
                     {"type": "input_image", "image_url": "data:image/png;base64,AAAA"}]},
        {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "3 passed"},
    ]}  # fmt: skip
    found = asked("responses", body)
    assert (found.text, found.fresh) == ("run the tests", False)
    ends = {"input": [{"role": "user", "content": "again"}]}  # no "type": a message
    assert asked("responses", ends).fresh


@pytest.mark.parametrize("body", [{}, {"messages": None}, {"messages": ["odd", 3]},
                                  {"messages": [{"role": "user", "content": 42}]}])  # fmt: skip
def test_odd_bodies_ask_nothing_and_do_not_raise(body):
    found = asked("chat", body)
    assert found.text == ""
    assert asked("responses", {"input": 7}).text == ""


def test_every_turn_of_one_conversation_shares_a_session_and_another_conversation_does_not():
    first = [{"role": "user", "content": "plan my trip to Pune"}]
    later = [*first, {"role": "assistant", "content": "Sure."},
             {"role": "user", "content": "and the hotels?"}]  # fmt: skip
    other = [{"role": "user", "content": "write a haiku"}]
    one, two = asked("chat", {"messages": first}), asked("chat", {"messages": later})
    assert one.session == two.session
    assert one.session != asked("chat", {"messages": other}).session
    assert one.session.startswith("gateway:")


def test_a_long_question_is_cut_to_the_turn_size():
    assert len(asked("chat", {"messages": [{"role": "user", "content": "x" * 20000}]}).text) \
        == MAX_CHARS  # fmt: skip


def test_an_unknown_dialect_is_a_programming_error():
    with pytest.raises(ValueError, match="embeddings"):
        asked("embeddings", {"input": "x"})
    with pytest.raises(ValueError):
        TextTap("completions")


# -- whole answers -----------------------------------------------------------------------------


def test_the_text_of_a_whole_answer_in_each_dialect():
    reply = Reply(text=TEXT)
    bodies = {
        "chat": openai_wire.completion(reply, "m1", "r1"),
        "messages": anthropic_wire.message(reply, "m1", "r1"),
        "responses": responses_wire.response(reply, "m1", "r1"),
    }
    for dialect, body in bodies.items():
        assert answer_text(dialect, orjson.dumps(body)) == TEXT, dialect


def test_an_answer_of_tool_calls_only_or_not_json_has_no_text():
    reply = Reply(tool_calls=CALL)
    assert answer_text("chat", orjson.dumps(openai_wire.completion(reply, "m", "r"))) == ""
    assert answer_text("messages", orjson.dumps(anthropic_wire.message(reply, "m", "r"))) == ""
    assert answer_text("responses", orjson.dumps(responses_wire.response(reply, "m", "r"))) == ""
    for raw in (b"", b"not json", b"[1, 2]", b'{"choices": "no"}', b'{"choices": [{}]}'):
        assert answer_text("chat", raw) == ""


def test_chat_content_given_as_parts_and_several_text_blocks_are_joined():
    parts = {"choices": [{"message": {"content": [{"type": "text", "text": "a"},
                                                  {"type": "text", "text": "b"}]}}]}  # fmt: skip
    assert answer_text("chat", orjson.dumps(parts)) == "ab"
    blocks = {
        "content": [
            {"type": "thinking", "thinking": "hm"},
            {"type": "text", "text": "x"},
            {"type": "tool_use", "input": {}},
            {"type": "text", "text": "y"},
        ]
    }
    assert answer_text("messages", orjson.dumps(blocks)) == "xy"


# -- streams -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_tap_reads_a_streams_text_one_event_per_frame(dialect):
    assert tapped(dialect, frames(dialect, Reply(text=TEXT))) == TEXT


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_tap_reads_several_events_in_one_frame(dialect):
    all_events = frames(dialect, Reply(text=TEXT))
    assert tapped(dialect, [b"".join(all_events)]) == TEXT
    pairs = [b"".join(all_events[i : i + 2]) for i in range(0, len(all_events), 2)]
    assert tapped(dialect, pairs) == TEXT


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_tap_reads_events_cut_anywhere_even_inside_a_character(dialect):
    raw = b"".join(frames(dialect, Reply(text=TEXT))).replace(b"\\u00e7", "ç".encode())
    for size in (1, 7, 64):
        assert tapped(dialect, [raw[i : i + size] for i in range(0, len(raw), size)]) == TEXT


@pytest.mark.parametrize("dialect", DIALECTS)
def test_tool_call_arguments_are_not_answer_text(dialect):
    reply = Reply(tool_calls=CALL, chunks=["Let me ", "look."])
    assert tapped(dialect, frames(dialect, reply)) == "Let me look."
    assert tapped(dialect, frames(dialect, Reply(tool_calls=CALL))) == ""


def test_a_chat_tap_reads_the_first_choice_only_and_skips_keepalives_and_crlf():
    def chunk(index: int, text: str) -> bytes:
        data = {"choices": [{"index": index, "delta": {"content": text}}]}
        return b"data: " + orjson.dumps(data) + b"\r\n\r\n"

    stream = [b": keep-alive\n\n", chunk(0, "one "), chunk(1, "other"), chunk(0, "two"),
              b"data: not json, \"content\"\n\n", b"data: [DONE]\n\n"]  # fmt: skip
    assert tapped("chat", stream) == "one two"


def test_a_tap_reads_nerves_own_translations():
    """Messages and Responses answered by a chat-only upstream: nerve's translators' frames."""
    chunks = [orjson.loads(f[6:]) for f in frames("chat", Reply(text=TEXT))[:-1]]
    to_messages = MessagesStream("m1", input_tokens=5)
    to_responses = ResponsesStream({"model": "m1", "input": "hi"}, "m1")
    for dialect, translator in (("messages", to_messages), ("responses", to_responses)):
        out = [f for c in chunks for f in translator.feed(c)] + translator.finish()
        assert tapped(dialect, out) == TEXT, dialect


def test_a_tap_keeps_at_most_a_turns_worth_of_text():
    long = Reply(text="word " * 5000, chunks=["word "] * 5000)
    assert len(tapped("messages", frames("messages", long))) == MAX_CHARS
