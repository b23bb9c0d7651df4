"""Anthropic Messages -> OpenAI chat completions: the request checks and the request translation
of /v1/messages (the answers and errors are in test_messages_answer.py).
"""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest

from nerve.errors import RequestError
from nerve.gateway.dialects.messages_wire import (
    messages_to_chat,
    parse_messages_request,
)

TOOL = {"name": "Bash", "description": "run a command", "cache_control": {"type": "ephemeral"},
        "input_schema": {"type": "object", "properties": {"command": {"type": "string"}},
                         "required": ["command"]}}  # fmt: skip
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"


def body(**extra: Any) -> dict[str, Any]:
    return {"model": "claude-sonnet-4-5", "max_tokens": 256,
            "messages": [{"role": "user", "content": "hi"}], **extra}  # fmt: skip


def raw(value: Any) -> bytes:
    return orjson.dumps(value)


# --- parse_messages_request --------------------------------------------------------------------


def test_a_claude_code_body_parses_with_unknown_fields_kept():
    sent = body(system=[{"type": "text", "text": "You are Claude Code.",
                         "cache_control": {"type": "ephemeral"}}],
                tools=[TOOL], tool_choice={"type": "auto"}, stream=True, temperature=1,
                metadata={"user_id": "user_abc"},
                thinking={"type": "enabled", "budget_tokens": 1024},
                context_management={"edits": []}, top_k=5)  # fmt: skip
    assert parse_messages_request(raw(sent)) == sent


def test_max_tokens_may_be_left_out():
    sent = body()
    del sent["max_tokens"]
    assert parse_messages_request(raw(sent)) == sent


@pytest.mark.parametrize(
    ("change", "param"),
    [
        ({"model": None}, "model"),
        ({"model": ""}, "model"),
        ({"messages": None}, "messages"),
        ({"messages": []}, "messages"),
        ({"messages": ["hi"]}, "messages[0]"),
        ({"messages": [{"role": "tool", "content": "x"}]}, "messages[0].role"),
        (
            {"messages": [{"role": "system", "content": [{"type": "image"}]}]},
            "messages[0].content[0]",
        ),
        ({"messages": [{"role": "user", "content": 5}]}, "messages[0].content"),
        ({"messages": [{"role": "user"}]}, "messages[0].content"),
        ({"messages": [{"role": "user", "content": [{"text": "x"}]}]}, "messages[0].content[0]"),
        ({"messages": [{"role": "user", "content": ["x"]}]}, "messages[0].content[0]"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"max_tokens": "5"}, "max_tokens"),
        ({"max_tokens": True}, "max_tokens"),
        ({"system": 5}, "system"),
        ({"system": [{"type": "image"}]}, "system[0]"),
        ({"stream": "yes"}, "stream"),
        ({"temperature": "hot"}, "temperature"),
        ({"top_p": False}, "top_p"),
        ({"top_k": 1.5}, "top_k"),
        ({"stop_sequences": "END"}, "stop_sequences"),
        ({"stop_sequences": [1]}, "stop_sequences"),
        ({"tools": {"name": "x"}}, "tools"),
        ({"tools": ["Bash"]}, "tools[0]"),
        ({"tool_choice": "auto"}, "tool_choice"),
        ({"tool_choice": {"type": 1}}, "tool_choice.type"),
        ({"metadata": "u"}, "metadata"),
        ({"metadata": {"user_id": 5}}, "metadata.user_id"),
        ({"thinking": True}, "thinking"),
    ],
)
def test_a_bad_field_is_a_request_error_naming_it(change, param):
    with pytest.raises(RequestError) as caught:
        parse_messages_request(raw(body(**change)))
    assert caught.value.param == param and caught.value.status == 400


@pytest.mark.parametrize("data", [b"", b"{not json", b"[1, 2]"])
def test_a_body_that_is_not_a_json_object_is_invalid_json(data):
    with pytest.raises(RequestError) as caught:
        parse_messages_request(data)
    assert caught.value.code == "invalid_json"


# --- messages_to_chat --------------------------------------------------------------------------


def test_the_request_fields_map_to_their_chat_counterparts():
    chat = messages_to_chat(body(system="be brief", stop_sequences=["END"], temperature=0.2,
                                 top_p=0.9, top_k=40, metadata={"user_id": "u-1"},
                                 thinking={"type": "enabled", "budget_tokens": 2048}))  # fmt: skip
    assert chat == {"model": "claude-sonnet-4-5", "max_tokens": 256, "stop": ["END"],
                    "temperature": 0.2, "top_p": 0.9, "user": "u-1",
                    "messages": [{"role": "system", "content": "be brief"},
                                 {"role": "user", "content": "hi"}]}  # fmt: skip


def test_system_turns_inside_messages_stay_system_turns_in_place():
    # What Claude Code sends: its environment notes as a system turn, blocks or a string.
    notes = [{"type": "text", "text": "cwd: /w"}, {"type": "text", "text": "tools: Bash"}]
    chat = messages_to_chat(body(messages=[
        {"role": "system", "content": notes}, {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "ok"}, {"role": "system", "content": "later"},
        {"role": "user", "content": "go"}]))  # fmt: skip
    roles = [m["role"] for m in chat["messages"]]
    assert roles == ["system", "user", "assistant", "system", "user"]
    assert chat["messages"][0]["content"] == "cwd: /w\n\ntools: Bash"
    assert chat["messages"][3]["content"] == "later"


def test_a_stream_asks_for_usage_in_the_last_chunk():
    chat = messages_to_chat(body(stream=True))
    assert chat["stream"] is True and chat["stream_options"] == {"include_usage": True}
    assert "stream" not in messages_to_chat(body(stream=False))


def test_system_blocks_join_into_one_system_message_without_cache_control():
    chat = messages_to_chat(body(system=[
        {"type": "text", "text": "You are Claude Code.", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "Be careful."}]))  # fmt: skip
    assert chat["messages"][0] == {
        "role": "system",
        "content": "You are Claude Code.\n\nBe careful.",
    }
    assert "cache_control" not in json.dumps(chat)


def test_user_text_blocks_become_one_string_and_images_become_image_url_parts():
    text_only = [{"type": "text", "text": "<reminder>", "cache_control": {"type": "ephemeral"}},
                 {"type": "text", "text": "fix it"}]  # fmt: skip
    chat = messages_to_chat(body(messages=[{"role": "user", "content": text_only}]))
    assert chat["messages"] == [{"role": "user", "content": "<reminder>\n\nfix it"}]
    base64 = {"type": "base64", "media_type": "image/png", "data": PNG}
    url = {"type": "url", "url": "https://x.test/a.jpg"}
    images = [{"type": "text", "text": "what is this?"}, {"type": "image", "source": base64},
              {"type": "image", "source": url}]  # fmt: skip
    chat = messages_to_chat(body(messages=[{"role": "user", "content": images}]))
    assert chat["messages"][0]["content"] == [
        {"type": "text", "text": "what is this?"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
        {"type": "image_url", "image_url": {"url": "https://x.test/a.jpg"}}]  # fmt: skip


def test_tool_use_becomes_tool_calls_and_tool_results_come_first_in_order():
    messages = [
        {"role": "user", "content": "look at both"},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Reading."},
            {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"path": "ä.txt"}},
            {"type": "tool_use", "id": "toolu_2", "name": "Read", "input": {}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "one"},
            {"type": "text", "text": "and hurry"},
            {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": True,
             "content": [{"type": "text", "text": "no such file"}]}]},
    ]  # fmt: skip
    chat = messages_to_chat(body(messages=messages, tools=[TOOL]))["messages"]
    assert chat[1] == {
        "role": "assistant",
        "content": "Reading.",
        "tool_calls": [
            {
                "id": "toolu_1",
                "type": "function",
                "function": {"name": "Read", "arguments": '{"path":"ä.txt"}'},
            },
            {"id": "toolu_2", "type": "function", "function": {"name": "Read", "arguments": "{}"}},
        ],
    }
    assert chat[2:] == [
        {"role": "tool", "tool_call_id": "toolu_1", "content": "one"},
        {"role": "tool", "tool_call_id": "toolu_2", "content": "Error: no such file"},
        {"role": "user", "content": "and hurry"}]  # fmt: skip


def test_a_tool_result_image_follows_the_tool_message_in_a_user_message():
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
    result = {"type": "tool_result", "tool_use_id": "t1",
              "content": [{"type": "text", "text": "screenshot:"}, image]}  # fmt: skip
    chat = messages_to_chat(body(messages=[{"role": "user", "content": [result]}]))["messages"]
    assert chat[0] == {"role": "tool", "tool_call_id": "t1", "content": "screenshot:"}
    assert chat[1]["role"] == "user"
    assert chat[1]["content"][0]["image_url"]["url"].startswith("data:image/png;base64,")


def test_thinking_blocks_are_dropped_and_a_thinking_only_turn_with_them():
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "secret plan", "signature": "sig=="},
            {"type": "redacted_thinking", "data": "opaque"},
            {"type": "text", "text": "hello"}]},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "more",
                                           "signature": "s"}]},
        {"role": "user", "content": "go on"},
    ]  # fmt: skip
    chat = messages_to_chat(body(messages=messages))["messages"]
    assert chat == [{"role": "user", "content": "hi"},
                    {"role": "assistant", "content": "hello"},
                    {"role": "user", "content": "go on"}]  # fmt: skip


def test_a_text_document_becomes_text_and_a_pdf_is_refused():
    doc = {"type": "document", "title": "notes",
           "source": {"type": "text", "media_type": "text/plain", "data": "line one"}}  # fmt: skip
    chat = messages_to_chat(body(messages=[{"role": "user", "content": [doc]}]))
    assert chat["messages"][0]["content"] == "notes\n\nline one"
    pdf = {"type": "document", "source": {"type": "base64", "media_type": "application/pdf",
                                          "data": "JVBERi0="}}  # fmt: skip
    with pytest.raises(RequestError) as caught:
        messages_to_chat(body(messages=[{"role": "user", "content": [pdf]}]))
    assert caught.value.param == "messages[0].content[0].source.type"


@pytest.mark.parametrize(
    ("content", "role", "param"),
    [
        ([{"type": "image", "source": {"type": "file", "file_id": "f1"}}], "user",
         "messages[0].content[0].source.type"),
        ([{"type": "search_result", "source": "s", "title": "t", "content": []}], "user",
         "messages[0].content[0]"),
        ([{"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}}],
         "assistant", "messages[0].content[0]"),
        ([{"type": "tool_use", "id": "t", "name": "x", "input": "ls"}], "assistant",
         "messages[0].content[0].input"),
        ([{"type": "tool_result", "content": "x"}], "user", "messages[0].content[0].tool_use_id"),
    ],
)  # fmt: skip
def test_a_block_with_no_chat_form_is_a_request_error_naming_it(content, role, param):
    with pytest.raises(RequestError) as caught:
        messages_to_chat(body(messages=[{"role": role, "content": content}]))
    assert caught.value.param == param


def test_custom_tools_become_functions():
    custom = {**TOOL, "name": "Edit", "type": "custom"}
    chat = messages_to_chat(body(tools=[TOOL, custom]))
    assert chat["tools"] == [
        {"type": "function", "function": {"name": "Bash", "description": "run a command",
                                          "parameters": TOOL["input_schema"]}},
        {"type": "function", "function": {"name": "Edit", "description": "run a command",
                                          "parameters": TOOL["input_schema"]}}]  # fmt: skip


@pytest.mark.parametrize("kind", ["web_search_20250305", "bash_20250124",
                                  "text_editor_20250728", "code_execution_20250825"])  # fmt: skip
def test_a_server_tool_is_a_400_naming_its_type(kind):
    with pytest.raises(RequestError) as caught:
        messages_to_chat(body(tools=[TOOL, {"type": kind, "name": "x"}]))
    assert caught.value.status == 400 and caught.value.param == "tools[1].type"
    assert kind in caught.value.message


def test_the_mcp_connector_is_refused():
    with pytest.raises(RequestError) as caught:
        messages_to_chat(body(mcp_servers=[{"type": "url", "url": "https://x", "name": "x"}]))
    assert caught.value.param == "mcp_servers"


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ({"type": "auto"}, {"tool_choice": "auto"}),
        ({"type": "any"}, {"tool_choice": "required"}),
        ({"type": "none"}, {"tool_choice": "none"}),
        ({"type": "tool", "name": "Bash"},
         {"tool_choice": {"type": "function", "function": {"name": "Bash"}}}),
        ({"type": "auto", "disable_parallel_tool_use": True},
         {"tool_choice": "auto", "parallel_tool_calls": False}),
        ({"type": "any", "disable_parallel_tool_use": False}, {"tool_choice": "required"}),
    ],
)  # fmt: skip
def test_tool_choice_maps(choice, expected):
    chat = messages_to_chat(body(tools=[TOOL], tool_choice=choice))
    assert {k: chat[k] for k in ("tool_choice", "parallel_tool_calls") if k in chat} == expected


def test_tool_choice_without_tools_is_left_out_and_an_unknown_one_is_refused():
    chat = messages_to_chat(body(tool_choice={"type": "any"}))
    assert "tool_choice" not in chat and "tools" not in chat
    with pytest.raises(RequestError) as caught:
        messages_to_chat(body(tools=[TOOL], tool_choice={"type": "sometimes"}))
    assert caught.value.param == "tool_choice.type"
