"""POST /v1/chat/completions end to end: the official OpenAI SDK → nerve → a fake upstream."""

from __future__ import annotations

import json
import time

import httpx
import openai
import pytest

from tests.conftest import make_config
from tests.fakes.upstream import Reply

TOOL_CALL = {
    "id": "call_abc",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city": "Chennai",  "unit":"c"}'},
}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


@pytest.fixture
def server(serve, upstream):
    return serve(make_config({"primary": upstream}))


@pytest.fixture
def client(server):
    with openai.OpenAI(base_url=f"{server.url}/v1", api_key="client-key", max_retries=0) as c:
        yield c


def test_a_completion_comes_back_through_the_sdk_with_routing_headers(client, upstream):
    """GW-1: non-streamed completion; x-nerve-* headers say who answered."""
    upstream.script(Reply(text="namaste"))
    raw = client.chat.completions.with_raw_response.create(
        model="auto", messages=[{"role": "user", "content": "hi"}]
    )
    answer = raw.parse()
    assert answer.choices[0].message.content == "namaste"
    assert raw.headers["x-nerve-route"] == "default"
    assert raw.headers["x-nerve-provider"] == "primary"
    assert raw.headers["x-nerve-model"] == "m1"
    assert raw.headers["x-nerve-fallback"] == "false"
    assert upstream.requests[-1].body["model"] == "m1"


def test_the_upstream_key_is_sent_and_the_clients_key_never_is(client, upstream):
    """GW-2: the configured key goes upstream; the client's Authorization stays with nerve."""
    client.chat.completions.create(model="auto", messages=[{"role": "user", "content": "hi"}])
    sent = upstream.requests[-1].headers
    assert sent["authorization"] == "Bearer sk-primary"
    assert "client-key" not in json.dumps(sent)


def test_unknown_fields_pass_through_both_ways_byte_for_byte(server, upstream):
    """GW-10: fields nerve does not know reach the upstream, and the answer comes back unchanged."""
    upstream.script(Reply(extra={"vendor_field": {"x": [1, 2]}}))
    body = {
        "model": "auto",
        "messages": [{"role": "user", "content": "hi"}],
        "vendor_option": {"deep": True},
        "temperature": 0.3,
    }
    response = httpx.post(f"{server.url}/v1/chat/completions", json=body)
    assert response.status_code == 200
    assert upstream.requests[-1].body["vendor_option"] == {"deep": True}
    direct = upstream.requests[-1]
    assert direct.body["temperature"] == 0.3
    assert response.json()["choices"][0]["message"]["vendor_field"] == {"x": [1, 2]}


def test_tool_calls_pass_through_untouched(client, upstream):
    """GW-10: tool definitions go up as sent; tool-call arguments come back byte-identical."""
    upstream.script(Reply(tool_calls=[TOOL_CALL]))
    answer = client.chat.completions.create(
        model="auto", tools=TOOLS, messages=[{"role": "user", "content": "weather?"}]
    )
    call = answer.choices[0].message.tool_calls[0]
    assert call.function.arguments == TOOL_CALL["function"]["arguments"]
    assert call.id == "call_abc"
    assert upstream.requests[-1].body["tools"] == TOOLS


def test_streamed_tool_call_arguments_arrive_byte_identical(client, upstream):
    """GW-10 streamed: the argument deltas joined equal what the upstream sent."""
    upstream.script(Reply(tool_calls=[TOOL_CALL]))
    stream = client.chat.completions.create(
        model="auto", tools=TOOLS, stream=True, messages=[{"role": "user", "content": "weather?"}]
    )
    args = "".join(
        tc.function.arguments or ""
        for chunk in stream
        for choice in chunk.choices
        for tc in (choice.delta.tool_calls or [])
    )
    assert args == TOOL_CALL["function"]["arguments"]


def test_a_stream_arrives_in_pieces_and_its_usage_is_counted(client, server, upstream):
    """GW-1, GW-13: SSE through the SDK; usage counted even when the client did not ask for it."""
    upstream.script(
        Reply(
            chunks=["Hel", "lo ", "there"],
            usage={"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
        )
    )
    chunks = list(
        client.chat.completions.create(
            model="auto", stream=True, messages=[{"role": "user", "content": "hi"}]
        )
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Hello there"
    assert all(c.choices for c in chunks), "a usage-only chunk leaked to a client that never asked"
    assert upstream.requests[-1].body["stream_options"] == {"include_usage": True}
    stats = httpx.get(f"{server.url}/stats").json()
    assert stats["tokens"]["prompt"] == 5
    assert stats["tokens"]["completion"] == 3


def test_a_client_that_asks_for_stream_usage_gets_it(client, upstream):
    """GW-1: stream_options.include_usage is honoured."""
    upstream.script(Reply(usage={"prompt_tokens": 2, "completion_tokens": 4, "total_tokens": 6}))
    chunks = list(
        client.chat.completions.create(
            model="auto",
            stream=True,
            stream_options={"include_usage": True},
            messages=[{"role": "user", "content": "hi"}],
        )
    )
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens == 6


def test_stream_bytes_are_forwarded_before_the_upstream_finishes(server, upstream):
    """GW-9: no buffering. The upstream holds back after its first piece; the client has it."""
    upstream.script(Reply(chunks=["first", "second"], gate_after=1))
    body = {"model": "auto", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    seen = []
    with httpx.stream("POST", f"{server.url}/v1/chat/completions", json=body, timeout=10) as r:
        lines = r.iter_lines()
        for line in lines:
            if line.startswith("data:") and "first" in line:
                seen.append("first")
                upstream.release()  # only now may the upstream finish
                break
        rest = "\n".join(lines)
    assert seen == ["first"]
    assert "second" in rest and rest.rstrip().endswith("data: [DONE]")


def test_a_stream_cut_midway_ends_with_one_error_event(client, server, upstream):
    """GW-9: a failure after the first byte sends one SSE error chunk and ends the stream."""
    upstream.script(Reply(chunks=["a", "b", "c", "d"], cut_after=2))
    body = {"model": "auto", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    with httpx.stream("POST", f"{server.url}/v1/chat/completions", json=body, timeout=10) as r:
        events = [line for line in r.iter_lines() if line.startswith("data:")]
    errors = [e for e in events if '"error"' in e]
    assert len(errors) == 1 and events[-1] == errors[0]
    assert "[DONE]" not in events[-1]
    assert json.loads(errors[0][5:])["error"]["message"]
    upstream.script(Reply(chunks=["a", "b", "c", "d"], cut_after=2))
    with pytest.raises(openai.APIError):
        list(
            client.chat.completions.create(
                model="auto", stream=True, messages=[{"role": "user", "content": "hi"}]
            )
        )
    assert httpx.get(f"{server.url}/stats").json()["errors"] == 2


def test_models_lists_auto_routes_and_targets(client):
    """GW-1: GET /v1/models."""
    ids = [m.id for m in client.models.list()]
    assert ids[:2] == ["auto", "default"]
    assert "primary/m1" in ids


def test_a_route_or_provider_model_can_be_named_explicitly(serve, upstream):
    """GW-3: model = a route name, or provider/model."""
    config = make_config(
        {"primary": upstream},
        routes=[
            {
                "name": "code",
                "rules": ["python"],
                "model": {"provider": "primary", "model": "coder"},
            },
            {"name": "default", "model": {"provider": "primary", "model": "m1"}},
        ],
    )
    server = serve(config)
    msg = [{"role": "user", "content": "hello"}]
    r = httpx.post(f"{server.url}/v1/chat/completions", json={"model": "code", "messages": msg})
    assert r.headers["x-nerve-route"] == "code" and upstream.requests[-1].body["model"] == "coder"
    r = httpx.post(
        f"{server.url}/v1/chat/completions", json={"model": "primary/some-model", "messages": msg}
    )
    assert r.status_code == 200 and upstream.requests[-1].body["model"] == "some-model"
    r = httpx.post(f"{server.url}/v1/chat/completions", json={"model": "gpt-9", "messages": msg})
    assert r.status_code == 404
    assert r.json()["error"]["code"] == "model_not_found"
    assert "code, default" in r.json()["error"]["message"]


def wait_until(condition, timeout=5.0):
    """Poll a condition until it holds (bounded): for effects that have no event to wait on."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"


def test_a_client_that_hangs_up_midstream_frees_its_slot_and_the_upstream(serve, upstream):
    """GW-9: the stream stops when the client leaves; its concurrency slot is released."""
    server = serve(make_config({"primary": upstream}, limits={"rate": {"max_concurrent": 1}}))
    upstream.script(Reply(chunks=["a", "b"], gate_after=1))
    body = {"model": "auto", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    with httpx.stream("POST", f"{server.url}/v1/chat/completions", json=body, timeout=10) as r:
        lines = r.iter_lines()
        next(lines)
    # the client is gone while the upstream still holds its stream open
    limiter = server.app.gateway.limiter
    wait_until(lambda: limiter.snapshot()["in_flight"] == 0)
    stats = httpx.get(f"{server.url}/stats").json()
    assert stats["errors"] == 0, "a client hanging up is not the provider's error"
    assert stats["rejections"] == {"client_disconnected": 1}
    upstream.release()
    assert (
        httpx.post(f"{server.url}/v1/chat/completions", json={**body, "stream": False}).status_code
        == 200
    )
