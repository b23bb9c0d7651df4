"""An Anthropic provider behind the OpenAI surface: SDK speaks OpenAI, upstream Anthropic."""

from __future__ import annotations

import json

import openai
import pytest

from tests.conftest import make_config
from tests.fakes.upstream import Reply

TOOL_CALL = {
    "id": "toolu_1",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city":"Pune"}'},
}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


@pytest.fixture
def client(serve, upstream):
    server = serve(make_config({"anthropic": upstream}))
    with openai.OpenAI(base_url=f"{server.url}/v1", api_key="x", max_retries=0) as c:
        yield c


def test_a_completion_is_translated_both_ways(client, upstream):
    """GW-2: system prompt, messages and usage translated; the upstream gets Anthropic headers."""
    upstream.script(
        Reply(
            text="vanakkam", usage={"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13}
        )
    )
    answer = client.chat.completions.create(
        model="auto",
        messages=[{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}],
    )
    assert answer.choices[0].message.content == "vanakkam"
    assert answer.usage.prompt_tokens == 9 and answer.usage.completion_tokens == 4
    sent = upstream.requests[-1]
    assert sent.path == "/v1/messages" and sent.protocol == "anthropic"
    assert sent.headers["x-api-key"] == "sk-ant-test" and "anthropic-version" in sent.headers
    assert sent.body["system"] in ("be brief", [{"type": "text", "text": "be brief"}])
    assert (
        sent.body["messages"] == [{"role": "user", "content": "hi"}]
        or sent.body["messages"][0]["role"] == "user"
    )


def test_tool_calls_round_trip_through_anthropic(client, upstream):
    """GW-2, GW-10: tools → Anthropic tools; tool_use → OpenAI tool_calls; results go back."""
    upstream.script(Reply(tool_calls=[TOOL_CALL]))
    answer = client.chat.completions.create(
        model="auto", tools=TOOLS, messages=[{"role": "user", "content": "weather in Pune?"}]
    )
    call = answer.choices[0].message.tool_calls[0]
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == {"city": "Pune"}
    assert answer.choices[0].finish_reason == "tool_calls"
    assert upstream.requests[-1].body["tools"][0]["input_schema"]["properties"]["city"]
    client.chat.completions.create(
        model="auto",
        tools=TOOLS,
        messages=[
            {"role": "user", "content": "weather in Pune?"},
            {"role": "assistant", "content": None, "tool_calls": [call.model_dump()]},
            {"role": "tool", "tool_call_id": call.id, "content": "31C"},
        ],
    )
    blocks = upstream.requests[-1].body["messages"][-1]["content"]
    assert blocks[0]["type"] == "tool_result" and blocks[0]["tool_use_id"] == call.id


def test_a_stream_is_translated_event_by_event(client, upstream):
    """GW-2: Anthropic SSE events become OpenAI chunks, tool-call deltas and usage included."""
    upstream.script(
        Reply(
            chunks=["Hel", "lo"],
            usage={"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
        )
    )
    chunks = list(
        client.chat.completions.create(
            model="auto",
            stream=True,
            stream_options={"include_usage": True},
            messages=[{"role": "user", "content": "hi"}],
        )
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Hello"
    assert chunks[-1].usage.prompt_tokens == 3 and chunks[-1].usage.completion_tokens == 2
    upstream.script(Reply(tool_calls=[TOOL_CALL]))
    stream = client.chat.completions.create(
        model="auto", tools=TOOLS, stream=True, messages=[{"role": "user", "content": "w?"}]
    )
    args = "".join(
        tc.function.arguments or ""
        for c in stream
        for ch in c.choices
        for tc in (ch.delta.tool_calls or [])
    )
    assert json.loads(args) == {"city": "Pune"}
