"""POST /v1/responses with the real OpenAI SDK as the client: passed through to an upstream that
serves Responses, translated to chat-completions and Anthropic upstreams both ways, streams
included; function and custom tools (Codex's apply_patch) round trip."""

from __future__ import annotations

import json

import httpx
import openai
import pytest

from tests.conftest import make_config
from tests.fakes.upstream import Reply

ROUTES = [
    {"name": "default", "model": {"provider": "chatonly", "model": "gpt-chat"}},
    {"name": "native", "model": {"provider": "native", "model": "gpt-5"}},
    {"name": "claude", "model": {"provider": "anthropic", "model": "claude-up"}},
]
SHELL = {"type": "function", "name": "shell", "description": "run a command",
         "parameters": {"type": "object", "properties": {"command": {"type": "array",
                                                                     "items": {"type": "string"}}},
                        "required": ["command"]}, "strict": False}  # fmt: skip
APPLY_PATCH = {
    "type": "custom",
    "name": "apply_patch",
    "description": "edit files",
    "format": {
        "type": "grammar",
        "syntax": "lark",
        "definition": 'start: "*** Begin Patch" /(.|\\n)*/ "*** End Patch"',
    },
}
PATCH = "*** Begin Patch\n*** Add File: hi.txt\n+hello\n*** End Patch"


@pytest.fixture
def server(serve, upstream, upstream2, tmp_path):
    config = make_config({"chatonly": upstream, "native": upstream2, "anthropic": upstream2},
                         routes=ROUTES, model_aliases={"gpt-5*": "default"})  # fmt: skip
    providers = [p.model_copy(update={"responses": p.name == "native"}) for p in config.providers]
    return serve(config.model_copy(update={"providers": providers}))  # native serves /responses


@pytest.fixture
def client(server):
    with openai.OpenAI(base_url=f"{server.url}/v1", api_key="x", max_retries=0) as c:
        yield c


def test_a_response_is_translated_to_chat_and_back(client, server, upstream):
    upstream.script(Reply(text="namaste", usage={"prompt_tokens": 8, "completion_tokens": 2,
                                                 "total_tokens": 10}))  # fmt: skip
    raw = client.responses.with_raw_response.create(
        model="gpt-5-codex", instructions="be brief", store=False,
        input=[{"type": "message", "role": "developer", "content": "repo rules"},
               {"type": "message", "role": "user",
                "content": [{"type": "input_text", "text": "hi"}]}],
    )  # fmt: skip
    response = raw.parse()
    assert response.output_text == "namaste" and response.status == "completed"
    assert response.usage.input_tokens == 8 and response.usage.output_tokens == 2
    assert raw.headers["x-nerve-route"] == "default"
    sent = upstream.requests[-1]
    assert sent.path == "/v1/chat/completions" and sent.body["model"] == "gpt-chat"
    assert sent.body["messages"][0] == {"role": "system", "content": "be brief"}
    assert [m["role"] for m in sent.body["messages"]][-1] == "user"
    assert "repo rules" in json.dumps(sent.body["messages"])
    assert httpx.get(f"{server.url}/stats").json()["tokens"]["prompt"] == 8


def test_a_function_call_round_trips_over_two_stateless_turns(client, upstream):
    call = {"id": "call_7", "type": "function",
            "function": {"name": "shell", "arguments": '{"command": ["ls"]}'}}  # fmt: skip
    upstream.script(Reply(tool_calls=[call]), Reply(text="two files"))
    first = client.responses.create(model="default", input="list files", tools=[SHELL])
    item = first.output[-1]
    assert (item.type, item.call_id, item.name) == ("function_call", "call_7", "shell")
    assert json.loads(item.arguments) == {"command": ["ls"]}
    second = client.responses.create(
        model="default", tools=[SHELL],
        input=[{"role": "user", "content": "list files"},
               {"type": "function_call", "call_id": "call_7", "name": "shell",
                "arguments": item.arguments},
               {"type": "function_call_output", "call_id": "call_7", "output": "a.txt b.txt"}],
    )  # fmt: skip
    assert second.output_text == "two files"
    messages = upstream.requests[-1].body["messages"]
    assert messages[-2]["tool_calls"][0]["id"] == "call_7"
    assert messages[-1] == {"role": "tool", "tool_call_id": "call_7", "content": "a.txt b.txt"}


def test_a_custom_tool_call_comes_back_as_custom_tool_call(client, upstream):
    """Codex's apply_patch is a freeform tool: the model's call returns as custom_tool_call
    carrying the patch text, not JSON."""
    call = {
        "id": "call_p",
        "type": "function",
        "function": {"name": "apply_patch", "arguments": json.dumps({"input": PATCH})},
    }
    upstream.script(Reply(tool_calls=[call]), Reply(tool_calls=[call]))
    response = client.responses.create(model="default", input="add hi.txt", tools=[APPLY_PATCH])
    item = response.output[-1]
    assert item.type == "custom_tool_call" and item.name == "apply_patch" and item.input == PATCH
    stream = client.responses.create(model="default", input="again", tools=[APPLY_PATCH],
                                     stream=True)  # fmt: skip
    events = list(stream)
    done = events[-1]
    assert done.type == "response.completed"
    assert done.response.output[-1].type == "custom_tool_call"
    assert done.response.output[-1].input == PATCH


def test_a_translated_stream_speaks_responses_events(client, upstream):
    upstream.script(Reply(chunks=["Hel", "lo"], usage={"prompt_tokens": 4, "completion_tokens": 2,
                                                       "total_tokens": 6}))  # fmt: skip
    events = list(client.responses.create(model="default", input="hi", stream=True))
    kinds = [e.type for e in events]
    assert kinds[0] == "response.created"
    assert [e.delta for e in events if e.type == "response.output_text.delta"] == ["Hel", "lo"]
    assert kinds[-1] == "response.completed"
    assert events[-1].response.output_text == "Hello"
    assert events[-1].response.usage.output_tokens == 2
    numbers = [e.sequence_number for e in events]
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)


def test_a_failure_midway_is_a_response_failed_event(client, upstream):
    upstream.script(Reply(chunks=["a", "b", "c", "d"], cut_after=2))
    events = list(client.responses.create(model="default", input="hi", stream=True))
    assert events[-1].type == "response.failed"
    assert events[-1].response.status == "failed" and events[-1].response.error.message


def test_an_upstream_that_serves_responses_gets_the_body_verbatim(client, upstream2):
    body = {"input": [{"role": "user", "content": "hi"}], "store": False,
            "include": ["reasoning.encrypted_content"], "reasoning": {"effort": "high"},
            "prompt_cache_key": "abc", "tools": [SHELL, APPLY_PATCH]}  # fmt: skip
    response = client.responses.create(model="native", **body)
    assert response.output_text == "Hello from fake"
    sent = upstream2.requests[-1]
    assert sent.path == "/v1/responses"
    assert sent.body == {**body, "model": "gpt-5"}
    events = list(client.responses.create(model="native", stream=True, **body))
    assert events[-1].type == "response.completed"
    assert upstream2.requests[-1].body["stream"] is True


def test_a_response_is_translated_to_an_anthropic_upstream(client, upstream2):
    upstream2.script(Reply(text="from claude"))
    response = client.responses.create(model="claude", input="hi", max_output_tokens=50)
    assert response.output_text == "from claude"
    sent = upstream2.requests[-1]
    assert sent.path == "/v1/messages" and sent.body["max_tokens"] == 50
    events = list(client.responses.create(model="claude", input="hi", stream=True))
    assert events[-1].response.output_text == "Hello from fake"


def test_previous_response_id_is_refused_naming_the_way(client, upstream):
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model="default", input="hi", previous_response_id="resp_1")
    assert caught.value.body["param"] == "previous_response_id"
    assert "store" in caught.value.body["message"]
    assert upstream.requests == []


def test_a_hosted_tool_is_left_out_on_a_chat_upstream(client, upstream):
    answer = client.responses.create(model="default", input="hi", tools=[{"type": "web_search"}])
    assert answer.output_text == "Hello from fake"
    assert "tools" not in upstream.requests[-1].body
