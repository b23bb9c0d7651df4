"""POST /v1/messages with the real Anthropic SDK as the client: passed through to an Anthropic
upstream verbatim, translated to an OpenAI one both ways, streams included; count_tokens,
model aliases, keep-alive pings, signed thinking kept on its provider."""

from __future__ import annotations

import json

import anthropic
import httpx
import pytest

from tests.conftest import make_config
from tests.fakes.upstream import Reply

ROUTES = [
    {"name": "default", "model": {"provider": "anthropic", "model": "claude-up"}},
    {"name": "code", "model": {"provider": "openai", "model": "gpt-up"}},
    {"name": "mixed", "model": {"provider": "openai", "model": "gpt-up"},
     "fallbacks": [{"provider": "anthropic", "model": "claude-up"}]},
]  # fmt: skip
ALIASES = {"claude-3-5-haiku*": "code", "claude-*": "default"}
TOOL = {"name": "Bash", "description": "run a command",
        "input_schema": {"type": "object", "properties": {"command": {"type": "string"}},
                         "required": ["command"]}}  # fmt: skip
WEATHER_CALL = {"id": "call_1", "type": "function",
                "function": {"name": "Bash", "arguments": '{"command": "ls -la"}'}}  # fmt: skip


def config(upstream, upstream2, **extra):
    return make_config({"anthropic": upstream, "openai": upstream2}, routes=ROUTES,
                       model_aliases=ALIASES, **extra)  # fmt: skip


@pytest.fixture
def server(serve, upstream, upstream2):
    return serve(config(upstream, upstream2))


@pytest.fixture
def client(server):
    with anthropic.Anthropic(base_url=server.url, api_key="client-key", max_retries=0) as c:
        yield c


def ask(**extra):
    return {"model": "claude-sonnet-4-5", "max_tokens": 256,
            "messages": [{"role": "user", "content": "hi"}], **extra}  # fmt: skip


# --- passthrough to an Anthropic upstream ------------------------------------------------------


def test_the_body_and_anthropic_headers_pass_through_verbatim(client, upstream):
    body = ask(
        system=[{"type": "text", "text": "You are Claude Code.",
                 "cache_control": {"type": "ephemeral"}}],
        messages=[
            {"role": "user", "content": [{"type": "text", "text": "fix it",
                                          "cache_control": {"type": "ephemeral"}}]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "look first", "signature": "sig-abc=="},
                {"type": "text", "text": "ok"}]},
            {"role": "user", "content": "go"},
        ],
        thinking={"type": "enabled", "budget_tokens": 1024},
        metadata={"user_id": "u-1"},
        tools=[TOOL],
    )  # fmt: skip
    raw = client.messages.with_raw_response.create(
        **body,
        extra_headers={
            "anthropic-beta": "made-up-beta-2099-01-01,fine-grained-tool-streaming-2025-05-14"
        },
    )
    message = raw.parse()
    assert message.content[0].text == "Hello from fake"
    assert raw.headers["x-nerve-route"] == "default" and raw.headers["x-nerve-model"] == "claude-up"
    sent = upstream.requests[-1]
    assert sent.path == "/v1/messages"
    assert sent.body == {**body, "model": "claude-up", "stream": False}
    assert sent.headers["anthropic-beta"] == (
        "made-up-beta-2099-01-01,fine-grained-tool-streaming-2025-05-14"
    )
    assert sent.headers["anthropic-version"] == client.default_headers["anthropic-version"]
    assert sent.headers["x-api-key"] == "sk-ant-test"  # the provider's key, never the client's
    assert "client-key" not in json.dumps(sent.headers)


def test_the_answer_is_the_upstreams_bytes(server, upstream):
    upstream.script(Reply(json={"id": "msg_1", "type": "message", "role": "assistant",
                                "model": "claude-up", "content": [{"type": "text", "text": "x"}],
                                "stop_reason": "end_turn", "stop_sequence": None,
                                "usage": {"input_tokens": 3, "output_tokens": 1},
                                "unknown_future_field": {"kept": True}}))  # fmt: skip
    r = httpx.post(f"{server.url}/v1/messages", json=ask(), headers={"x-api-key": "k"})
    assert r.status_code == 200
    assert r.json()["unknown_future_field"] == {"kept": True}


def test_an_upstream_error_comes_back_unmodified_with_its_status(client, upstream):
    error = {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "prompt is too long: 250000 tokens > 200000",
        },
    }
    upstream.script(Reply(status=400, json=error))
    with pytest.raises(anthropic.BadRequestError) as caught:
        client.messages.create(**ask())
    assert caught.value.status_code == 400
    assert caught.value.body == error


def test_a_stream_passes_through_with_its_pings(server, client, upstream):
    upstream.script(Reply(chunks=["Hel", "lo"]))
    with httpx.stream("POST", f"{server.url}/v1/messages", json=ask(stream=True)) as r:
        text = r.read().decode()
    events = [line[7:] for line in text.splitlines() if line.startswith("event: ")]
    assert events == ["message_start", "content_block_start", "ping", "content_block_delta",
                      "content_block_delta", "content_block_stop", "message_delta",
                      "message_stop"]  # the upstream's own events, its ping too  # fmt: skip
    upstream.script(Reply(chunks=["Hel", "lo"], usage={"prompt_tokens": 9, "completion_tokens": 2,
                                                       "total_tokens": 11}))  # fmt: skip
    with client.messages.stream(**ask()) as stream:
        assert "".join(stream.text_stream) == "Hello"
        final = stream.get_final_message()
    assert final.usage.output_tokens == 2
    stats = httpx.get(f"{server.url}/stats").json()
    assert stats["by_route"]["default"]["calls"] == 2
    assert stats["tokens"]["completion"] >= 2


def test_beta_query_and_the_sdks_beta_client_work(client, upstream):
    message = client.beta.messages.create(**ask(), betas=["context-management-2025-06-27"])
    assert message.content[0].text == "Hello from fake"
    assert upstream.requests[-1].headers["anthropic-beta"] == "context-management-2025-06-27"


# --- translated to an OpenAI upstream ----------------------------------------------------------


def test_a_message_is_translated_to_chat_and_back(client, upstream2):
    upstream2.script(Reply(text="namaste", usage={"prompt_tokens": 12, "completion_tokens": 3,
                                                  "total_tokens": 15}))  # fmt: skip
    raw = client.messages.with_raw_response.create(
        **ask(model="claude-3-5-haiku-20241022", system="be brief")
    )
    message = raw.parse()
    assert raw.headers["x-nerve-route"] == "code"
    assert message.content[0].text == "namaste" and message.stop_reason == "end_turn"
    assert message.usage.input_tokens == 12 and message.usage.output_tokens == 3
    sent = upstream2.requests[-1]
    assert sent.path == "/v1/chat/completions" and sent.body["model"] == "gpt-up"
    assert sent.body["messages"][0] == {"role": "system", "content": "be brief"}
    assert sent.body["messages"][-1]["role"] == "user"


def test_a_tool_call_comes_back_as_tool_use_and_its_result_goes_up(client, upstream2):
    upstream2.script(Reply(tool_calls=[WEATHER_CALL]), Reply(text="done"))
    first = client.messages.create(**ask(model="code", tools=[TOOL]))
    use = next(b for b in first.content if b.type == "tool_use")
    assert first.stop_reason == "tool_use"
    assert (use.id, use.name, use.input) == ("call_1", "Bash", {"command": "ls -la"})
    history = [{"role": "user", "content": "list files"},
               {"role": "assistant", "content": [b.model_dump() for b in first.content]},
               {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1",
                                             "content": "a.txt"}]}]  # fmt: skip
    second = client.messages.create(**ask(model="code", tools=[TOOL], messages=history))
    assert second.content[0].text == "done"
    sent = upstream2.requests[-1].body
    assert sent["tools"][0]["function"]["name"] == "Bash"
    tool = next(m for m in sent["messages"] if m["role"] == "tool")
    assert tool["tool_call_id"] == "call_1" and "a.txt" in json.dumps(tool["content"])


def test_a_translated_stream_speaks_anthropic_events(client, upstream2):
    upstream2.script(Reply(chunks=["I will ", "look."], tool_calls=[WEATHER_CALL],
                           usage={"prompt_tokens": 20, "completion_tokens": 9,
                                  "total_tokens": 29}))  # fmt: skip
    with client.messages.stream(**ask(model="code", tools=[TOOL])) as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_message()
    assert kinds[0] == "message_start" and "content_block_start" in kinds
    assert final.content[0].text == "I will look."
    assert final.content[1].type == "tool_use" and final.content[1].input == {"command": "ls -la"}
    assert final.stop_reason == "tool_use"
    assert final.usage.output_tokens == 9


def test_a_translated_stream_cut_midway_ends_with_an_error_event(server, client, upstream2,
                                                                   caplog):  # fmt: skip
    upstream2.script(Reply(chunks=["a", "b", "c", "d"], cut_after=2))
    with httpx.stream(
        "POST", f"{server.url}/v1/messages", json=ask(model="code", stream=True)
    ) as r:
        text = r.read().decode()
    assert text.rstrip().splitlines()[-2] == "event: error"
    upstream2.script(Reply(chunks=["a", "b", "c", "d"], cut_after=2))
    with pytest.raises(anthropic.APIStatusError), client.messages.stream(**ask(model="code")) as s:
        list(s)
    assert any("STREAM CUT" in r.getMessage() and "openai/gpt-up" in r.getMessage()
               for r in caplog.records)  # fmt: skip


def test_pings_keep_a_silent_stream_alive(serve, upstream, upstream2):
    """The upstream says one piece and goes quiet; pings arrive until it goes on."""
    server = serve(config(upstream, upstream2, limits={"stream_keepalive_seconds": 0.05}))
    upstream2.script(Reply(chunks=["first", "second"], gate_after=1))
    pings = 0
    with httpx.stream("POST", f"{server.url}/v1/messages", json=ask(model="code", stream=True),
                      timeout=10) as r:  # fmt: skip
        lines = r.iter_lines()
        for line in lines:
            if line == "event: ping":
                pings += 1
                if pings == 2:
                    upstream2.release()
                    break
        rest = "\n".join(lines)
    assert pings == 2 and "second" in rest and "message_stop" in rest


# --- count_tokens, models, aliases, thinking ---------------------------------------------------


def test_count_tokens_asks_an_anthropic_upstream(client, upstream):
    count = client.messages.count_tokens(model="claude-opus-4-1", messages=[
        {"role": "user", "content": "hi"}], system="s", tools=[TOOL])  # fmt: skip
    assert count.input_tokens == 4242  # the fake upstream's own figure
    sent = upstream.requests[-1]
    assert sent.path == "/v1/messages/count_tokens" and sent.body["model"] == "claude-up"
    assert sent.body["tools"] == [TOOL]


def test_count_tokens_is_estimated_for_an_openai_model_and_grows_with_the_prompt(client, upstream2):
    small = client.messages.count_tokens(model="code", messages=[{"role": "user", "content": "hi"}])
    text = "The quick brown fox jumps over the lazy dog. " * 200
    big = client.messages.count_tokens(model="code", messages=[{"role": "user", "content": text}])
    assert 0 < small.input_tokens < 20
    assert 1500 < big.input_tokens < 3500  # ~2,000 tokens by any BPE tokenizer
    assert upstream2.requests == []


def test_an_unknown_model_is_a_404_in_anthropic_shape_listing_what_may_be_used(server, upstream):
    r = httpx.post(f"{server.url}/v1/messages", json=ask(model="gpt-4o"))
    assert r.status_code == 404
    error = r.json()
    assert error["type"] == "error" and error["error"]["type"] == "not_found_error"
    message = error["error"]["message"]
    assert (
        "'gpt-4o'" in message and "auto" in message and "claude-*" in message and "code" in message
    )
    assert upstream.requests == []


def test_models_answers_in_both_shapes_without_a_redirect(server, client):
    page = client.models.list()
    assert "auto" in [m.id for m in page.data] and "default" in [m.id for m in page.data]
    r = httpx.get(f"{server.url}/v1/models/", follow_redirects=False)
    assert r.status_code == 200 and r.json()["data"][0]["object"] == "model"


def test_signed_thinking_stays_on_the_anthropic_candidate(client, upstream, upstream2):
    """Route `mixed` puts openai first; a conversation carrying signed thinking goes to the
    Anthropic candidate instead, and one without it goes to openai."""
    thinking = [{"role": "user", "content": "hi"},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "hmm", "signature": "sig=="},
                    {"type": "text", "text": "yes"}]},
                {"role": "user", "content": "go on"}]  # fmt: skip
    client.messages.create(**ask(model="mixed", messages=thinking))
    assert [r.path for r in upstream.requests] == ["/v1/messages"]
    assert upstream.requests[-1].body["messages"][1]["content"][0]["signature"] == "sig=="
    client.messages.create(**ask(model="mixed"))
    assert [r.path for r in upstream2.requests] == ["/v1/chat/completions"]


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"max_tokens": 5, "messages": [{"role": "user", "content": "x"}]}, "model"),
        ({"model": "default", "max_tokens": 5}, "messages"),
        ({"model": "default", "max_tokens": 5, "messages": [{"role": "robot", "content": "x"}]},
         "messages[0].role"),
        ({"model": "default", "max_tokens": "5", "messages": [{"role": "user", "content": "x"}]},
         "max_tokens"),
    ],
)  # fmt: skip
def test_bad_bodies_are_400s_in_anthropic_shape_naming_the_field(server, upstream, body, param):
    r = httpx.post(f"{server.url}/v1/messages", json=body)
    assert r.status_code == 400, r.text
    error = r.json()
    assert error["type"] == "error" and error["error"]["type"] == "invalid_request_error"
    assert param in error["error"]["message"]
    assert upstream.requests == []
