"""OpenAI chat requests -> Anthropic Messages requests, and answers back (SPEC GW-2, GW-10).

The OpenAI-side answer is validated with the real `openai` SDK's ChatCompletion model.
"""

from __future__ import annotations

from typing import Any

import pytest
from openai.types.chat import ChatCompletion

from nerve.errors import RequestError
from nerve.gateway.providers.anthropic_wire import (
    from_anthropic_response,
    to_anthropic_request,
)

JSON = dict[str, Any]
SCHEMA: JSON = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
WEATHER: JSON = {
    "type": "function",
    "function": {"name": "get_weather", "description": "Weather in a city.", "parameters": SCHEMA},
}


def user(content: Any) -> JSON:
    return {"role": "user", "content": content}


def text(t: str) -> JSON:
    return {"type": "text", "text": t}


def call(call_id: str, name: str, arguments: str) -> JSON:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def tool_use(call_id: str, name: str, args: JSON) -> JSON:
    return {"type": "tool_use", "id": call_id, "name": name, "input": args}


def request(*messages: JSON, **fields: Any) -> JSON:
    return to_anthropic_request({"messages": list(messages), **fields}, "claude-sonnet-4-5")


def refused(*messages: JSON, **fields: Any) -> RequestError:
    with pytest.raises(RequestError) as caught:
        request(*messages, **fields)
    assert caught.value.status == 400
    return caught.value


# --- request: messages ---------------------------------------------------------------------------


def test_a_system_message_becomes_the_top_level_system_string() -> None:
    """GW-2: Anthropic takes the system prompt beside the messages, not among them."""
    body = request({"role": "system", "content": "Be terse."}, user("Hi"))

    assert body["system"] == "Be terse."
    assert body["messages"] == [{"role": "user", "content": [text("Hi")]}]
    assert body["model"] == "claude-sonnet-4-5"
    assert "system" not in request(user("Hi"))


def test_several_system_and_developer_messages_become_system_text_blocks() -> None:
    body = request(
        {"role": "system", "content": [text("One.")]},
        {"role": "developer", "content": "Two."},
        user("Hi"),
        {"role": "system", "content": "Three."},
    )

    assert body["system"] == [text("One."), text("Two."), text("Three.")]
    assert [m["role"] for m in body["messages"]] == ["user"]


def test_images_become_base64_or_url_image_blocks() -> None:
    """GW-2: data: URLs carry their media type; http(s) URLs are fetched by Anthropic."""
    png = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
    jpg = {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg"}}
    body = request(user([text("Compare these."), png, jpg]))

    base64 = {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}
    assert body["messages"][0]["content"] == [
        text("Compare these."),
        {"type": "image", "source": base64},
        {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.jpg"}},
    ]


@pytest.mark.parametrize("url", ["data:image/png,raw", "data:;base64,AAAA", "ftp://h/a.png", None])
def test_an_image_neither_base64_data_nor_http_is_a_request_error(url: Any) -> None:
    error = refused(user("x"), user([{"type": "image_url", "image_url": {"url": url}}]))

    assert error.param == "messages[1].content[0].image_url"


def test_an_unsupported_content_part_is_a_request_error_naming_it() -> None:
    audio = {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}}

    assert refused(user([text("listen"), audio])).param == "messages[0].content[1]"


def test_an_unknown_role_is_a_request_error() -> None:
    error = refused(user("Hi"), {"role": "narrator", "content": "Meanwhile..."})

    assert error.param == "messages[1].role"


def test_consecutive_messages_of_one_role_merge_into_one_turn() -> None:
    """GW-2: Anthropic requires user and assistant turns to alternate."""
    body = request(
        user("First."),
        user([text("Second.")]),
        {"role": "assistant", "content": "A."},
        {"role": "assistant", "content": "B."},
        user("Third."),
    )

    assert body["messages"] == [
        {"role": "user", "content": [text("First."), text("Second.")]},
        {"role": "assistant", "content": [text("A."), text("B.")]},
        {"role": "user", "content": [text("Third.")]},
    ]


def test_empty_text_is_left_out_because_anthropic_refuses_it() -> None:
    body = request(user("Hi"), {"role": "assistant", "content": ""}, user(""), user("Again"))

    assert body["messages"] == [{"role": "user", "content": [text("Hi"), text("Again")]}]


def test_cache_control_on_a_content_part_is_kept() -> None:
    cached = {**text("Long context."), "cache_control": {"type": "ephemeral"}}

    assert request({"role": "system", "content": [cached]}, user("Hi"))["system"] == [cached]


# --- request: tools ------------------------------------------------------------------------------

WITH_TOOL_CALLS: list[JSON] = [
    {"role": "system", "content": "You check the weather."},
    user("Weather in Paris and Tōkyō?"),
    {
        "role": "assistant",
        "content": "Checking both.",
        "tool_calls": [
            call("toolu_01A", "get_weather", '{"city": "Paris"}'),
            call("call_9xY", "get_weather", '{"city":"Tōkyō"}'),
        ],
    },
    {"role": "tool", "tool_call_id": "toolu_01A", "content": "18°C, cloudy"},
    {"role": "tool", "tool_call_id": "call_9xY", "content": [text("24°C")]},
    user("Which is warmer?"),
]


def test_tool_calls_and_tool_results_become_tool_use_and_tool_result_blocks() -> None:
    """GW-10: ids, names and arguments cross untouched; results join the next user turn."""
    body = request(*WITH_TOOL_CALLS, tools=[WEATHER])

    assert body["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                text("Checking both."),
                tool_use("toolu_01A", "get_weather", {"city": "Paris"}),
                tool_use("call_9xY", "get_weather", {"city": "Tōkyō"}),
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01A", "content": "18°C, cloudy"},
                {"type": "tool_result", "tool_use_id": "call_9xY", "content": [text("24°C")]},
                text("Which is warmer?"),
            ],
        },
    ]
    expected_tool = {"name": "get_weather", "description": "Weather in a city."}
    assert body["tools"] == [{**expected_tool, "input_schema": SCHEMA}]


def test_a_tool_call_answered_by_anthropic_goes_back_unchanged_on_the_next_turn() -> None:
    """GW-10: tool_use -> OpenAI tool_calls -> tool_use again keeps id, name and input."""
    block = tool_use("toolu_01XyZ", "get_weather", {"city": "São Paulo", "days": [1, 2]})
    answer = from_anthropic_response({"id": "msg_1", "content": [block], "stop_reason": "tool_use"})
    result = {"role": "tool", "tool_call_id": "toolu_01XyZ", "content": "ok"}
    body = request(user("Weather?"), answer["choices"][0]["message"], result)

    assert body["messages"][1] == {"role": "assistant", "content": [block]}


def test_a_function_without_parameters_gets_an_empty_object_schema() -> None:
    body = request(user("Time?"), tools=[{"type": "function", "function": {"name": "now"}}])

    assert body["tools"] == [{"name": "now", "input_schema": {"type": "object", "properties": {}}}]


def test_a_non_function_tool_is_a_request_error() -> None:
    custom = {"type": "custom", "custom": {"name": "grep"}}

    assert refused(user("x"), tools=[WEATHER, custom]).param == "tools[1].type"


def test_tool_call_arguments_that_are_not_json_are_a_request_error_naming_the_message() -> None:
    """GW-10: a broken tool call is refused, never silently rewritten."""
    broken = {"role": "assistant", "tool_calls": [call("c1", "f", "{city: Paris")]}

    assert refused(user("x"), broken).param == "messages[1].tool_calls[0].function.arguments"


def test_tool_call_arguments_that_are_not_an_object_are_a_request_error() -> None:
    error = refused(user("x"), {"role": "assistant", "tool_calls": [call("c1", "f", "[1, 2]")]})

    assert "JSON object" in error.message


def test_empty_tool_call_arguments_mean_an_empty_input() -> None:
    no_args = {"role": "assistant", "content": None, "tool_calls": [call("c1", "now", "")]}

    assert request(user("x"), no_args)["messages"][1]["content"] == [tool_use("c1", "now", {})]


def test_a_tool_message_without_a_tool_call_id_is_a_request_error() -> None:
    error = refused(user("x"), {"role": "tool", "content": "result"})

    assert error.param == "messages[1].tool_call_id"


NAMED: JSON = {"type": "function", "function": {"name": "get_weather"}}


@pytest.mark.parametrize(
    ("tool_choice", "parallel", "expected"),
    [
        (None, None, None),
        ("auto", None, {"type": "auto"}),
        ("none", None, {"type": "none"}),
        ("required", None, {"type": "any"}),
        (NAMED, None, {"type": "tool", "name": "get_weather"}),
        (None, False, {"type": "auto", "disable_parallel_tool_use": True}),
        ("required", False, {"type": "any", "disable_parallel_tool_use": True}),
        (NAMED, False, {"type": "tool", "name": "get_weather", "disable_parallel_tool_use": True}),
        ("none", False, {"type": "none"}),
        ("auto", True, {"type": "auto"}),
    ],
)
def test_tool_choice_and_parallel_tool_calls_map_to_anthropic_tool_choice(
    tool_choice: Any, parallel: bool | None, expected: JSON | None
) -> None:
    fields: JSON = {"tools": [WEATHER]}
    if tool_choice is not None:
        fields["tool_choice"] = tool_choice
    if parallel is not None:
        fields["parallel_tool_calls"] = parallel

    assert request(user("x"), **fields).get("tool_choice") == expected


def test_tool_choice_without_tools_is_not_sent() -> None:
    assert "tool_choice" not in request(user("x"), tool_choice="required")


@pytest.mark.parametrize("choice", ["sometimes", {"type": "function"}, {"type": "allowed_tools"}])
def test_an_unknown_tool_choice_is_a_request_error(choice: Any) -> None:
    assert refused(user("x"), tools=[WEATHER], tool_choice=choice).param == "tool_choice"


# --- request: sampling and limits ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("stop", "expected"), [("END", ["END"]), (["a", "b"], ["a", "b"]), ([], None), (None, None)]
)
def test_stop_becomes_stop_sequences(stop: Any, expected: list[str] | None) -> None:
    assert request(user("x"), stop=stop).get("stop_sequences") == expected


def test_max_completion_tokens_wins_over_max_tokens_and_4096_is_the_default() -> None:
    assert request(user("x"))["max_tokens"] == 4096
    assert request(user("x"), max_tokens=100)["max_tokens"] == 100
    assert request(user("x"), max_tokens=100, max_completion_tokens=200)["max_tokens"] == 200


def test_sampling_fields_user_and_stream_carry_over() -> None:
    body = request(user("x"), temperature=0.3, top_p=0.9, user="client-42", stream=True)

    assert body["temperature"] == 0.3
    assert body["top_p"] == 0.9
    assert body["metadata"] == {"user_id": "client-42"}
    assert body["stream"] is True


def test_temperature_above_anthropics_range_is_capped_and_neutral_top_p_is_left_out() -> None:
    body = request(user("x"), temperature=1.7, top_p=1)

    assert body["temperature"] == 1.0
    assert "top_p" not in body


OPENAI_ONLY: JSON = {"n": 1, "logprobs": True, "top_logprobs": 3, "presence_penalty": 0.5}
OPENAI_ONLY |= {"frequency_penalty": 0.5, "logit_bias": {"50256": -100}, "seed": 7}
OPENAI_ONLY |= {"response_format": {"type": "json_object"}, "stream_options": {}, "store": True}


def test_openai_only_fields_are_dropped() -> None:
    assert set(request(user("x"), **OPENAI_ONLY)) == {"model", "max_tokens", "messages"}


def test_asking_for_more_than_one_choice_is_a_request_error() -> None:
    assert refused(user("x"), n=2).param == "n"


def test_messages_that_are_not_a_list_are_a_request_error() -> None:
    with pytest.raises(RequestError) as caught:
        to_anthropic_request({"messages": "Hi"}, "claude")

    assert caught.value.param == "messages"


# --- response ------------------------------------------------------------------------------------

MESSAGE: JSON = {
    "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5-20250929",
    "content": [
        {"type": "thinking", "thinking": "Two cities, two calls.", "signature": "EqQBCgIYAh"},
        text("Let me check both."),
        tool_use("toolu_01A", "get_weather", {"city": "Paris"}),
        tool_use("toolu_01B", "get_weather", {"city": "東京"}),
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {"input_tokens": 410, "output_tokens": 95},
}
MESSAGE["usage"] |= {"cache_creation_input_tokens": 20, "cache_read_input_tokens": 1000}


def test_an_anthropic_message_becomes_a_chat_completion() -> None:
    """GW-2: the answer validates as the real SDK's ChatCompletion; cached input is prompt."""
    answer = from_anthropic_response(MESSAGE, "claude-via-nerve")
    completion = ChatCompletion.model_validate(answer)

    assert completion.id == "msg_01XFDUDYJgAACzvnptvVoYEL"
    assert completion.object == "chat.completion"
    assert isinstance(answer["created"], int)
    assert completion.model == "claude-via-nerve"
    assert completion.choices[0].index == 0
    assert completion.choices[0].finish_reason == "tool_calls"
    assert completion.choices[0].message.content == "Let me check both."
    assert answer["choices"][0]["message"]["reasoning_content"] == "Two cities, two calls."
    assert answer["usage"] == {"prompt_tokens": 1430, "completion_tokens": 95, "total_tokens": 1525}


def test_tool_use_blocks_become_tool_calls_with_compact_json_arguments() -> None:
    """GW-10: ids and names unchanged; arguments decode to exactly the tool input."""
    calls = from_anthropic_response(MESSAGE)["choices"][0]["message"]["tool_calls"]

    assert calls == [
        call("toolu_01A", "get_weather", '{"city":"Paris"}'),
        call("toolu_01B", "get_weather", '{"city":"東京"}'),
    ]


def test_content_is_none_when_the_answer_is_only_tool_calls() -> None:
    message = from_anthropic_response({**MESSAGE, "content": MESSAGE["content"][2:]})
    only_tools = message["choices"][0]["message"]

    assert only_tools["content"] is None
    assert "reasoning_content" not in only_tools
    assert len(only_tools["tool_calls"]) == 2


def test_text_blocks_join_and_the_response_model_is_the_default() -> None:
    answer = from_anthropic_response({**MESSAGE, "content": [text("Hello, "), text("world.")]})

    assert answer["model"] == "claude-sonnet-4-5-20250929"
    assert answer["choices"][0]["message"] == {"role": "assistant", "content": "Hello, world."}


FINISH = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "pause_turn": "stop"}
FINISH |= {"tool_use": "tool_calls", "refusal": "content_filter", "from_the_future": "stop"}
FINISH |= {"model_context_window_exceeded": "length"}


@pytest.mark.parametrize(("stop_reason", "finish_reason"), FINISH.items())
def test_stop_reasons_map_to_finish_reasons(stop_reason: str, finish_reason: str) -> None:
    answer = from_anthropic_response({**MESSAGE, "stop_reason": stop_reason})

    assert answer["choices"][0]["finish_reason"] == finish_reason
