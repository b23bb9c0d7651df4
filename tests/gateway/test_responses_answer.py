"""Chat completions answers -> OpenAI Responses `Response` objects (SPEC GW-21).

Every Response is validated with the real `openai` SDK's Response model; tool calls round trip
through a second stateless request as Codex sends it.
"""

from __future__ import annotations

import json
from typing import Any

from openai.types.responses import Response

from nerve.gateway.dialects.responses_wire import (
    chat_to_response,
    response_usage,
    responses_to_chat,
)
from tests.gateway.codex_tools import APPLY_PATCH, JSON, PATCH, SHELL

USAGE: JSON = {
    "prompt_tokens": 9,
    "completion_tokens": 3,
    "total_tokens": 12,
    "prompt_tokens_details": {"cached_tokens": 4},
    "completion_tokens_details": {"reasoning_tokens": 2},
}


def chat(*items: Any, **fields: Any) -> JSON:
    return responses_to_chat({"model": "gpt-5-codex", "input": list(items), **fields})


def message(role: str, content: Any) -> JSON:
    return {"type": "message", "role": role, "content": content}


def completion(message: JSON, finish: str = "stop", usage: JSON | None = USAGE) -> JSON:
    out = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "up-model",
        "choices": [
            {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}
        ],
    }
    return {**out, "usage": usage} if usage is not None else out


def answer(message: JSON, body: JSON, **kwargs: Any) -> Response:
    return Response.model_validate(chat_to_response(completion(message, **kwargs), body))


def call(call_id: str, name: str, arguments: str) -> JSON:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


# --- text -------------------------------------------------------------------------------------


def test_an_answer_is_a_completed_response_echoing_the_request() -> None:
    request = {
        "model": "gpt-5-codex",
        "input": "Hi",
        "instructions": "Be brief.",
        "tools": [SHELL],
        "temperature": 0.5,
        "max_output_tokens": 64,
    }
    raw = chat_to_response(completion({"content": "Namaste."}), request)
    response = Response.model_validate(raw)

    assert raw["id"].startswith("resp_") and response.object == "response"
    assert response.status == "completed" and response.output_text == "Namaste."
    assert response.model == "up-model" and response.instructions == "Be brief."
    assert response.temperature == 0.5 and response.max_output_tokens == 64
    assert response.tools[0].name == "shell" and response.tool_choice == "auto"
    (item,) = response.output
    assert item.type == "message" and item.id.startswith("msg_") and item.status == "completed"


def test_usage_maps_to_responses_usage_and_missing_usage_is_null() -> None:
    usage = answer({"content": "x"}, {"model": "m", "input": "x"}).usage

    assert usage is not None
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (9, 3, 12)
    assert usage.input_tokens_details.cached_tokens == 4
    assert usage.output_tokens_details.reasoning_tokens == 2
    assert answer({"content": "x"}, {"model": "m", "input": "x"}, usage=None).usage is None


def test_reasoning_content_comes_back_as_a_reasoning_summary_before_the_message() -> None:
    response = answer({"content": "42", "reasoning_content": "Think."}, {"model": "m", "input": ""})

    reasoning, msg = response.output
    assert reasoning.type == "reasoning" and reasoning.summary[0].text == "Think."
    assert msg.type == "message" and response.output_text == "42"
    other = answer({"content": "42", "reasoning": "Also."}, {"model": "m", "input": ""})
    assert other.output[0].summary[0].text == "Also."


def test_running_out_of_tokens_is_an_incomplete_response() -> None:
    response = answer({"content": "Once upon"}, {"model": "m", "input": "x"}, finish="length")

    assert response.status == "incomplete"
    assert response.incomplete_details is not None
    assert response.incomplete_details.reason == "max_output_tokens"
    assert response.output[0].status == "incomplete"


def test_a_refusal_is_a_refusal_part() -> None:
    response = answer({"content": None, "refusal": "I can't."}, {"model": "m", "input": "x"})

    assert response.output[0].content[0].type == "refusal"
    assert response.output[0].content[0].refusal == "I can't."


def test_responses_usage_is_counted_as_chat_usage() -> None:
    usage = {
        "input_tokens": 5,
        "output_tokens": 2,
        "total_tokens": 7,
        "input_tokens_details": {"cached_tokens": 1},
    }

    assert response_usage(usage) == {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
    assert response_usage({"input_tokens": 5, "output_tokens": 2})["total_tokens"] == 7


# --- tool calls ----------------------------------------------------------------------------


def test_a_function_call_round_trips_over_two_stateless_turns() -> None:
    """GW-21: turn one's function_call, sent back with its output, is the chat tool exchange."""
    first_request = {"model": "m", "input": "List files.", "tools": [SHELL]}
    first = answer(
        {"content": None, "tool_calls": [call("call_7", "shell", '{"cmd":"ls"}')]},
        first_request,
        finish="tool_calls",
    )
    (item,) = first.output
    assert (item.type, item.call_id, item.name, item.arguments) == (
        "function_call",
        "call_7",
        "shell",
        '{"cmd":"ls"}',
    )
    assert item.id and item.id.startswith("fc_") and first.status == "completed"

    output = {"type": "function_call_output", "call_id": "call_7", "output": "a.txt b.txt"}
    body = chat(
        message("user", "List files."), item.model_dump(exclude_none=True), output, tools=[SHELL]
    )
    assert body["messages"][1:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("call_7", "shell", '{"cmd":"ls"}')],
        },
        {"role": "tool", "tool_call_id": "call_7", "content": "a.txt b.txt"},
    ]
    second = answer({"content": "Two files."}, {**first_request, "input": body["messages"]})
    assert second.output_text == "Two files."


def test_a_custom_tool_call_comes_back_as_custom_tool_call_carrying_the_patch() -> None:
    """GW-21: Codex's apply_patch wants the raw patch text, not JSON arguments."""
    request = {"model": "m", "input": "Add hi.txt", "tools": [SHELL, APPLY_PATCH]}
    args = json.dumps({"input": PATCH})
    response = answer(
        {
            "content": None,
            "tool_calls": [call("call_p", "apply_patch", args), call("call_s", "shell", "{}")],
        },
        request,
        finish="tool_calls",
    )

    patch, shell = response.output
    assert (patch.type, patch.name, patch.call_id, patch.input) == (
        "custom_tool_call",
        "apply_patch",
        "call_p",
        PATCH,
    )
    assert shell.type == "function_call"
    odd = answer({"tool_calls": [call("c", "apply_patch", '{"patch": 1}')]}, request)
    assert odd.output[0].type == "custom_tool_call" and odd.output[0].input == '{"patch": 1}'


def test_local_shell_is_a_function_and_its_calls_round_trip_as_local_shell_calls() -> None:
    action = {
        "type": "exec",
        "command": ["ls", "-a"],
        "env": {},
        "working_directory": "/r",
        "timeout_ms": 500,
    }
    body = chat(
        {
            "type": "local_shell_call",
            "id": "lsh_1",
            "call_id": "s1",
            "action": action,
            "status": "completed",
        },
        {"type": "local_shell_call_output", "id": "s1", "output": '{"stdout": "a"}'},
        tools=[{"type": "local_shell"}],
    )

    assert body["tools"][0]["function"]["name"] == "local_shell"
    sent = body["messages"][0]["tool_calls"][0]["function"]
    assert json.loads(sent["arguments"]) == {
        "command": ["ls", "-a"],
        "workdir": "/r",
        "timeout_ms": 500,
    }
    assert body["messages"][1]["tool_call_id"] == "s1"
    back = answer(
        {"tool_calls": [call("s2", "local_shell", sent["arguments"])]},
        {"model": "m", "input": "x", "tools": [{"type": "local_shell"}]},
    )
    item = back.output[0]
    assert item.type == "local_shell_call" and item.call_id == "s2"
    assert item.action.command == ["ls", "-a"] and item.action.working_directory == "/r"


def test_namespace_tools_are_flattened_and_their_calls_come_back_namespaced() -> None:
    """Codex sends its sub-agent tools as a namespace."""
    namespace = {
        "type": "namespace",
        "name": "agents",
        "description": "Sub-agents.",
        "tools": [{**SHELL, "name": "spawn"}],
    }
    body = chat(
        message("user", "Hi"),
        {
            "type": "function_call",
            "call_id": "c",
            "name": "spawn",
            "namespace": "agents",
            "arguments": "{}",
        },
        tools=[namespace],
    )

    assert body["tools"][0]["function"]["name"] == "agents__spawn"
    assert body["messages"][1]["tool_calls"][0]["function"]["name"] == "agents__spawn"
    back = answer(
        {"tool_calls": [call("c2", "agents__spawn", "{}")]},
        {"model": "m", "input": "x", "tools": [namespace]},
    )
    assert (back.output[0].name, back.output[0].namespace) == ("spawn", "agents")


def test_tools_an_additional_tools_item_brings_are_declared_and_round_trip() -> None:
    """Newer Codex sends its tools (a freeform `exec` among them) in the input, not in `tools`."""
    exec_tool = {**APPLY_PATCH, "name": "exec"}
    brought = {"type": "additional_tools", "role": "developer",
               "tools": [{"type": "namespace", "name": "functions", "description": "",
                          "tools": [exec_tool]}]}  # fmt: skip
    body = chat(brought, message("user", "Run it."))

    assert body["messages"] == [{"role": "user", "content": "Run it."}]
    assert [t["function"]["name"] for t in body["tools"]] == ["functions__exec"]
    request = {"model": "m", "input": [brought, message("user", "Run it.")]}
    args = json.dumps({"input": "1 + 1"})
    (item,) = answer({"tool_calls": [call("cx", "functions__exec", args)]}, request).output
    assert (item.type, item.name, item.namespace, item.input) == (
        "custom_tool_call", "exec", "functions", "1 + 1")  # fmt: skip
