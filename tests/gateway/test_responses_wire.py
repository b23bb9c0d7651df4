"""OpenAI Responses requests -> chat-completions requests (SPEC GW-21).

Stateless, as Codex uses it: the whole input each turn. Answers are in test_responses_answer,
the stream in test_responses_stream.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from nerve.errors import RequestError
from nerve.gateway.dialects.responses_wire import parse_responses_request, responses_to_chat
from tests.gateway.codex_tools import APPLY_PATCH, GRAMMAR, JSON, PATCH, SHELL


def chat(*items: Any, **fields: Any) -> JSON:
    return responses_to_chat({"model": "gpt-5-codex", "input": list(items), **fields})


def message(role: str, content: Any) -> JSON:
    return {"type": "message", "role": role, "content": content}


def refused(fn: Any, *args: Any, **kwargs: Any) -> RequestError:
    with pytest.raises(RequestError) as caught:
        fn(*args, **kwargs)
    assert caught.value.status == 400
    return caught.value


def parsed(**fields: Any) -> JSON:
    return parse_responses_request(json.dumps({"model": "m", "input": "hi", **fields}).encode())


# --- request: messages -----------------------------------------------------------------------


def test_instructions_come_first_as_system_and_a_string_input_is_one_user_message() -> None:
    body = responses_to_chat({"model": "gpt-5", "instructions": "Be brief.", "input": "Hi"})

    assert body["model"] == "gpt-5"
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
    ]


def test_developer_messages_become_system_and_text_parts_become_text() -> None:
    """GW-21: most chat upstreams refuse the developer role, so it is sent as system."""
    body = chat(
        message("developer", [{"type": "input_text", "text": "Repo rules."}]),
        {
            "role": "user",
            "content": [{"type": "input_text", "text": "a"}, {"type": "input_text", "text": "b"}],
        },
        message("assistant", [{"type": "output_text", "text": "Done.", "annotations": []}]),
        message("system", "Sys."),
    )

    assert body["messages"] == [
        {"role": "system", "content": "Repo rules."},
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
        {"role": "assistant", "content": "Done."},
        {"role": "system", "content": "Sys."},
    ]


def test_an_image_url_passes_and_an_openai_file_id_is_refused() -> None:
    image = {"type": "input_image", "image_url": "https://x.test/cat.png", "detail": "low"}
    body = chat(message("user", [{"type": "input_text", "text": "What?"}, image]))

    assert body["messages"][0]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": "https://x.test/cat.png", "detail": "low"},
    }
    file_image = {"type": "input_image", "file_id": "file-1", "detail": "auto"}
    error = refused(chat, message("user", [file_image]))
    assert error.param == "input[0].content[0].image_url" and "file_id" in error.message
    assert refused(chat, message("user", [{"type": "input_file", "file_id": "f"}])).param == (
        "input[0].content[0].type"
    )


def test_consecutive_calls_and_the_text_before_them_are_one_assistant_message() -> None:
    """GW-21: chat wants one assistant turn holding the calls, then their results."""
    body = chat(
        message("user", "Go."),
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"},
        message("assistant", "Looking."),
        {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": "{}"},
        {"type": "function_call", "call_id": "c2", "name": "shell", "arguments": '{"cmd":"pwd"}'},
        {
            "type": "function_call_output",
            "call_id": "c1",
            "output": [{"type": "input_text", "text": "ok"}],
        },
        {"type": "function_call_output", "call_id": "c2", "output": "/repo"},
    )

    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "tool", "tool"]
    assistant = body["messages"][1]
    assert assistant["content"] == "Looking."
    assert [c["id"] for c in assistant["tool_calls"]] == ["c1", "c2"]
    assert body["messages"][2] == {"role": "tool", "tool_call_id": "c1", "content": "ok"}
    assert "gAAA" not in json.dumps(body)  # reasoning is bound to the provider that wrote it


def test_an_item_reference_needs_state_and_is_refused() -> None:
    error = refused(chat, {"type": "item_reference", "id": "msg_1"})

    assert error.param == "input[0]" and "store: false" in error.message


@pytest.mark.parametrize("kind", ["computer_call", "web_search_call", "mcp_call", "compaction"])
def test_an_input_item_of_a_hosted_tool_is_refused_naming_its_type(kind: str) -> None:
    error = refused(chat, {"type": kind, "id": "x"})

    assert error.param == "input[0].type" and kind in error.message


# --- request: tools --------------------------------------------------------------------------


def test_function_tools_become_chat_functions_with_choice_and_parallel_calls() -> None:
    body = chat(
        message("user", "Hi"),
        tools=[SHELL],
        tool_choice={"type": "function", "name": "shell"},
        parallel_tool_calls=False,
    )

    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "shell",
                "description": "Run a command.",
                "parameters": SHELL["parameters"],
                "strict": False,
            },
        }
    ]
    assert body["tool_choice"] == {"type": "function", "function": {"name": "shell"}}
    assert body["parallel_tool_calls"] is False
    for choice in ("auto", "none", "required"):
        assert chat(message("user", "Hi"), tools=[SHELL], tool_choice=choice)["tool_choice"] == (
            choice
        )


def test_without_tools_no_tool_choice_or_parallel_calls_are_sent() -> None:
    """Chat upstreams refuse tool_choice and parallel_tool_calls when there are no tools."""
    body = chat(message("user", "Hi"), tool_choice="auto", parallel_tool_calls=True, tools=[])

    assert "tools" not in body and "tool_choice" not in body and "parallel_tool_calls" not in body


def test_a_custom_tool_is_a_function_of_one_string_with_its_grammar_as_the_hint() -> None:
    body = chat(
        message("user", "Add hi.txt"),
        tools=[APPLY_PATCH],
        tool_choice={"type": "custom", "name": "apply_patch"},
    )

    (tool,) = body["tools"]
    function = tool["function"]
    assert function["name"] == "apply_patch" and function["description"] == "Edit files."
    params = function["parameters"]
    assert params["required"] == ["input"] and params["properties"]["input"]["type"] == "string"
    assert GRAMMAR in params["properties"]["input"]["description"]
    assert body["tool_choice"] == {"type": "function", "function": {"name": "apply_patch"}}


def test_a_custom_tool_call_in_the_input_goes_up_as_json_arguments() -> None:
    body = chat(
        {"type": "custom_tool_call", "call_id": "cp", "name": "apply_patch", "input": PATCH},
        {"type": "custom_tool_call_output", "call_id": "cp", "output": "Done!"},
        tools=[APPLY_PATCH],
    )

    (sent,) = body["messages"][0]["tool_calls"]
    assert sent["id"] == "cp" and sent["function"]["name"] == "apply_patch"
    assert json.loads(sent["function"]["arguments"]) == {"input": PATCH}
    assert body["messages"][1] == {"role": "tool", "tool_call_id": "cp", "content": "Done!"}


@pytest.mark.parametrize(
    "kind",
    [
        "web_search",
        "web_search_preview",
        "file_search",
        "computer_use_preview",
        "code_interpreter",
        "image_generation",
        "mcp",
    ],
)
def test_a_hosted_tool_is_left_out_and_its_items_refused(kind: str) -> None:
    # A chat model cannot run OpenAI's hosted tools; Codex declares web_search every turn.
    body = chat(message("user", "Hi"), tools=[SHELL, {"type": kind}], tool_choice="auto")
    error = refused(chat, message("user", "Hi"), {"type": kind})

    assert [t["function"]["name"] for t in body["tools"]] == [SHELL["name"]]
    assert error.param == "input[1].type"


def test_only_hosted_tools_send_no_tools_and_no_tool_choice() -> None:
    body = chat(message("user", "Hi"), tools=[{"type": "web_search"}], tool_choice="auto",
                parallel_tool_calls=True)  # fmt: skip
    assert "tools" not in body and "tool_choice" not in body and "parallel_tool_calls" not in body


def test_a_tool_choice_naming_a_hosted_tool_is_refused() -> None:
    error = refused(chat, message("user", "Hi"), tools=[{"type": "web_search"}],
                    tool_choice={"type": "web_search"})  # fmt: skip
    assert error.param == "tool_choice"


# --- request: fields -------------------------------------------------------------------------


def test_request_fields_map_to_their_chat_names_and_state_fields_are_dropped() -> None:
    schema = {"type": "json_schema", "name": "out", "schema": {"type": "object"}, "strict": True}
    body = chat(
        message("user", "Hi"),
        max_output_tokens=100,
        temperature=0.2,
        top_p=0.9,
        reasoning={"effort": "high", "summary": "auto"},
        text={"format": schema},
        safety_identifier="u-1",
        stream=True,
        store=False,
        metadata={"a": "b"},
        include=["reasoning.encrypted_content"],
        truncation="auto",
        prompt_cache_key="k",
        service_tier="flex",
    )

    assert body == {
        "model": "gpt-5-codex",
        "messages": [{"role": "user", "content": "Hi"}],
        "max_completion_tokens": 100,
        "temperature": 0.2,
        "top_p": 0.9,
        "reasoning_effort": "high",
        "user": "u-1",
        "stream": True,
        "stream_options": {"include_usage": True},
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "out", "schema": {"type": "object"}, "strict": True},
        },
    }
    assert chat(message("user", "x"), text={"format": {"type": "json_object"}}, user="me")[
        "response_format"
    ] == {"type": "json_object"}


def test_a_checked_request_parses_and_stateless_fields_are_refused_naming_the_way() -> None:
    assert parsed(store=False, tools=[SHELL])["tools"] == [SHELL]
    for name, value in (
        ("previous_response_id", "resp_1"),
        ("conversation", "conv_1"),
        ("background", True),
    ):
        error = refused(parsed, **{name: value})
        assert error.param == name and "store: false" in error.message


@pytest.mark.parametrize(
    ("fields", "param"),
    [
        ({"model": ""}, "model"),
        ({"model": 5}, "model"),
        ({"input": 3}, "input"),
        ({"input": None}, "input"),
        ({"input": ["hi"]}, "input[0]"),
        ({"input": [{"type": 1}]}, "input[0].type"),
        ({"instructions": ["x"]}, "instructions"),
        ({"tools": {"type": "function"}}, "tools"),
        ({"tools": ["shell"]}, "tools[0]"),
        ({"stream": "yes"}, "stream"),
        ({"max_output_tokens": 0}, "max_output_tokens"),
        ({"max_output_tokens": True}, "max_output_tokens"),
        ({"temperature": "hot"}, "temperature"),
        ({"parallel_tool_calls": 1}, "parallel_tool_calls"),
        ({"user": 7}, "user"),
        ({"reasoning": {"effort": 3}}, "reasoning.effort"),
        ({"text": {"format": "json"}}, "text.format"),
        ({"tool_choice": 3}, "tool_choice"),
        ({"metadata": []}, "metadata"),
    ],
)
def test_a_field_of_the_wrong_type_is_a_request_error_naming_it(fields: JSON, param: str) -> None:
    assert refused(parsed, **fields).param == param


@pytest.mark.parametrize("raw", [b"", b"[1]", b"{bad"])
def test_a_body_that_is_no_json_object_is_invalid_json(raw: bytes) -> None:
    assert refused(parse_responses_request, raw).code == "invalid_json"


@pytest.mark.parametrize(
    ("item", "param"),
    [
        ({"role": "narrator", "content": "x"}, "input[0].role"),
        ({"role": ["user"], "content": "x"}, "input[0].role"),
        ({"type": "function_call", "name": "f", "arguments": "{}"}, "input[0].call_id"),
        (
            {"type": "function_call", "call_id": "c", "name": "f", "arguments": {}},
            "input[0].arguments",
        ),
        ({"type": "function_call_output", "call_id": "c", "output": 5}, "input[0].output"),
        (message("user", [{"type": "input_text", "text": 5}]), "input[0].content[0].text"),
    ],
)
def test_a_malformed_item_is_a_request_error_naming_the_field(item: JSON, param: str) -> None:
    assert refused(chat, item).param == param


def test_a_hosted_tool_an_additional_tools_item_brings_is_left_out_too() -> None:
    brought = {"type": "additional_tools", "role": "developer",
               "tools": [{"type": "web_search"}, SHELL, {"name": "no type"}]}  # fmt: skip
    assert refused(chat, brought, message("user", "Hi")).param == "input[0].tools[2].type"
    brought["tools"].pop()
    assert [t["function"]["name"] for t in chat(brought)["tools"]] == [SHELL["name"]]
