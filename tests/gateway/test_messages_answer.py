"""OpenAI chat completions -> Anthropic Messages: the answer translation and the error bodies of
/v1/messages, validated with the real `anthropic` SDK's models.
"""

from __future__ import annotations

from typing import Any

import pytest
from anthropic.types import ErrorResponse, Message

from nerve.errors import UpstreamError
from nerve.gateway.dialects.messages_wire import chat_to_message, error_body, message_usage


def completion(message: dict[str, Any], finish: str | None = "stop", **extra: Any) -> dict:
    return {"id": "chatcmpl-7", "object": "chat.completion", "created": 1, "model": "gpt-up",
            "choices": [{"index": 0, "message": {"role": "assistant", **message},
                         "finish_reason": finish}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15},
            **extra}  # fmt: skip


# --- chat_to_message ---------------------------------------------------------------------------


def test_a_text_answer_is_a_message_the_sdk_accepts():
    answer = chat_to_message(completion({"content": "namaste"}), "claude-x")
    message = Message.model_validate(answer)
    assert message.id == "msg_chatcmpl-7" and message.model == "claude-x"
    assert [(b.type, b.text) for b in message.content] == [("text", "namaste")]
    assert (message.stop_reason, message.stop_sequence) == ("end_turn", None)
    assert (message.usage.input_tokens, message.usage.output_tokens) == (12, 3)


def test_tool_calls_become_tool_use_blocks_with_parsed_input():
    calls = [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "Bash", "arguments": '{"command": "ls -la"}'},
        },
        {"id": "call_2", "type": "function", "function": {"name": "Now", "arguments": ""}},
    ]
    answer = chat_to_message(completion({"content": "Running.", "tool_calls": calls},
                                        "tool_calls"), "claude-x")  # fmt: skip
    message = Message.model_validate(answer)
    assert message.content[0].type == "text" and message.content[0].text == "Running."
    uses = [(b.id, b.name, b.input) for b in message.content[1:]]
    assert uses == [("call_1", "Bash", {"command": "ls -la"}), ("call_2", "Now", {})]
    assert message.stop_reason == "tool_use"


@pytest.mark.parametrize("arguments", ['{"command": "ls', "[1, 2]", "null"])
def test_tool_arguments_that_are_not_a_json_object_are_an_upstream_error(arguments):
    calls = [{"id": "c", "type": "function", "function": {"name": "Bash", "arguments": arguments}}]
    with pytest.raises(UpstreamError) as caught:
        chat_to_message(completion({"content": None, "tool_calls": calls}, "tool_calls"), "m")
    assert caught.value.code == "upstream_bad_json"


@pytest.mark.parametrize(("finish", "stop"), [("stop", "end_turn"), ("length", "max_tokens"),
                                              ("tool_calls", "tool_use"),
                                              ("function_call", "tool_use"),
                                              ("content_filter", "refusal"), (None, "end_turn"),
                                              ("brand_new", "end_turn")])  # fmt: skip
def test_finish_reasons_become_stop_reasons(finish, stop):
    answer = chat_to_message(completion({"content": "x"}, finish), "m")
    assert Message.model_validate(answer).stop_reason == stop


def test_cached_prompt_tokens_are_reported_as_cache_reads_outside_input_tokens():
    usage = {"prompt_tokens": 1000, "completion_tokens": 5, "total_tokens": 1005,
             "prompt_tokens_details": {"cached_tokens": 800}}  # fmt: skip
    message = Message.model_validate(chat_to_message(completion({"content": "x"}, usage=usage),
                                                     "m"))  # fmt: skip
    assert (message.usage.input_tokens, message.usage.cache_read_input_tokens) == (200, 800)
    assert message.usage.output_tokens == 5
    assert message_usage(message.usage.model_dump()) == {
        "prompt_tokens": 1000, "completion_tokens": 5, "total_tokens": 1005}  # fmt: skip


def test_reasoning_content_is_left_out_of_the_message():
    answer = chat_to_message(completion({"content": "4", "reasoning_content": "2+2"}), "m")
    assert answer["content"] == [{"type": "text", "text": "4"}]


def test_an_answer_without_a_message_is_an_upstream_error():
    with pytest.raises(UpstreamError) as caught:
        chat_to_message({"id": "x", "choices": []}, "m")
    assert caught.value.code == "upstream_bad_json"


def test_message_usage_counts_cache_writes_and_reads_as_prompt():
    usage = {"input_tokens": 10, "cache_creation_input_tokens": 20,
             "cache_read_input_tokens": 30, "output_tokens": 4}  # fmt: skip
    assert message_usage(usage) == {"prompt_tokens": 60, "completion_tokens": 4,
                                    "total_tokens": 64}  # fmt: skip


# --- error_body --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "kind"),
    [(400, "invalid_request_error"), (401, "authentication_error"), (402, "billing_error"),
     (403, "permission_error"), (404, "not_found_error"), (408, "timeout_error"),
     (413, "invalid_request_error"), (415, "invalid_request_error"), (429, "rate_limit_error"),
     (500, "api_error"), (502, "api_error"), (503, "api_error"), (504, "timeout_error"),
     (529, "overloaded_error")],
)  # fmt: skip
def test_error_bodies_are_anthropic_errors_the_sdk_accepts(status, kind):
    error = ErrorResponse.model_validate_json(error_body(status, "went wrong"))
    assert (error.type, error.error.type, error.error.message) == ("error", kind, "went wrong")
