"""The fake upstream speaks the OpenAI and Anthropic wire protocols over a real socket.

The OpenAI side is checked with the official SDK as the client; the Anthropic side with plain
aiohttp, reading the event sequence the way the Messages API documents it.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import aiohttp
import openai
import pytest

from tests.fakes.upstream import FakeUpstream, Reply

HELLO = [{"role": "user", "content": "hi"}]
ANTHROPIC_HEADERS = {"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01"}
WEATHER = {"id": "call_w", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}


@pytest.fixture
def upstream() -> Iterator[FakeUpstream]:
    with FakeUpstream() as up:
        yield up


@pytest.fixture
def client(upstream: FakeUpstream) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=upstream.openai_base_url, api_key="sk-test", max_retries=0) as sdk:
        yield sdk


def events(text: str) -> list[tuple[str | None, Any]]:
    """SSE text as (event name, parsed data) pairs."""
    out = []
    for block in text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        data = fields["data"]
        out.append((fields.get("event"), data if data == "[DONE]" else json.loads(data)))
    return out


async def anthropic_post(upstream: FakeUpstream, body: dict[str, Any], **headers: str) -> Any:
    url = upstream.anthropic_base_url + "/v1/messages"
    async with (
        aiohttp.ClientSession() as http,
        http.post(url, json=body, headers=headers or ANTHROPIC_HEADERS) as resp,
    ):
        return resp.status, await resp.text()


# --- OpenAI --------------------------------------------------------------------------------------


def test_openai_completion_echoes_the_model_and_records_the_request(
    upstream: FakeUpstream, client: openai.OpenAI
) -> None:
    reply = client.chat.completions.create(model="gpt-x", messages=HELLO)

    assert (reply.object, reply.model) == ("chat.completion", "gpt-x")
    assert reply.choices[0].message.content == "Hello from fake"
    assert reply.choices[0].finish_reason == "stop"
    assert reply.usage is not None and reply.usage.total_tokens == 18
    [seen] = upstream.wait_for_requests(1)
    assert (seen.path, seen.protocol) == ("/v1/chat/completions", "openai")
    assert seen.headers["authorization"] == "Bearer sk-test"
    assert seen.body == {"model": "gpt-x", "messages": HELLO}


def test_openai_stream_sends_usage_chunk_only_when_asked(client: openai.OpenAI) -> None:
    plain = list(client.chat.completions.create(model="m", messages=HELLO, stream=True))
    counted = list(
        client.chat.completions.create(
            model="m", messages=HELLO, stream=True, stream_options={"include_usage": True}
        )
    )

    assert "".join(c.choices[0].delta.content or "" for c in plain) == "Hello from fake"
    assert len([c for c in plain if c.choices[0].delta.content]) == 3
    assert all(c.choices and c.usage is None for c in plain)
    assert plain[-1].choices[0].finish_reason == "stop"
    *content, last = counted
    assert last.choices == [] and last.usage.total_tokens == 18
    assert all(c.choices and c.usage is None for c in content)


def test_openai_tool_calls_stream_as_indexed_argument_deltas(
    upstream: FakeUpstream, client: openai.OpenAI
) -> None:
    clock = {"function": {"name": "get_time", "arguments": {}}}
    upstream.script(Reply(tool_calls=[WEATHER, clock]), Reply(tool_calls=[WEATHER, clock]))

    chunks = list(client.chat.completions.create(model="m", messages=HELLO, stream=True))
    whole = client.chat.completions.create(model="m", messages=HELLO)

    args: dict[int, list[str]] = {}
    for chunk in chunks:
        for call in chunk.choices[0].delta.tool_calls or []:
            args.setdefault(call.index, []).append(call.function.arguments)
    assert "".join(args[0]) == '{"city": "Paris"}' and len([a for a in args[0] if a]) > 1
    assert "".join(args[1]) == "{}"
    assert chunks[-1].choices[0].finish_reason == "tool_calls"
    calls = whole.choices[0].message.tool_calls
    assert [(c.id, c.function.name) for c in calls] == [
        ("call_w", "get_weather"),
        ("call_fake1", "get_time"),
    ]
    assert whole.choices[0].message.content is None
    assert whole.choices[0].finish_reason == "tool_calls"


def test_openai_error_reply_reaches_the_sdk_with_body_and_retry_after(
    upstream: FakeUpstream, client: openai.OpenAI
) -> None:
    upstream.script(Reply(status=429, headers={"Retry-After": "7"}))

    with pytest.raises(openai.RateLimitError) as caught:
        client.chat.completions.create(model="m", messages=HELLO)

    assert caught.value.response.headers["retry-after"] == "7"
    assert caught.value.code == "rate_limit_exceeded"
    assert set(caught.value.body) == {"message", "type", "param", "code"}
    assert "429" in caught.value.body["message"]


def test_scripts_are_consumed_per_model_then_for_any_model_then_default(
    upstream: FakeUpstream, client: openai.OpenAI
) -> None:
    upstream.script(Reply(text="for a"), model="model-a")
    upstream.script(Reply(text="any 1"), Reply(text="any 2"))

    def ask(model: str) -> str | None:
        reply = client.chat.completions.create(model=model, messages=HELLO)
        return reply.choices[0].message.content

    assert [ask("model-b"), ask("model-a"), ask("model-a"), ask("model-a")] == [
        "any 1",
        "for a",
        "any 2",
        "Hello from fake",
    ]
    assert [m.id for m in client.models.list()] == ["fake-model", "model-a"]


async def test_openai_requests_without_model_or_messages_get_400(upstream: FakeUpstream) -> None:
    url = upstream.openai_base_url + "/chat/completions"
    async with aiohttp.ClientSession() as http:
        for body in ({"messages": HELLO}, {"model": "m"}):
            async with http.post(url, json=body) as resp:
                assert resp.status == 400
                error = (await resp.json())["error"]
                assert error["type"] == "invalid_request_error"
                assert set(error) == {"message", "type", "param", "code"}


async def test_overrides_send_json_raw_bytes_and_extra_fields(upstream: FakeUpstream) -> None:
    extra = {"reasoning_content": "thinking"}
    upstream.script(
        Reply(json={"custom": True}),
        Reply(raw=b"{not json"),
        Reply(extra=extra),
        Reply(extra=extra),
    )
    url = upstream.openai_base_url + "/chat/completions"
    async with aiohttp.ClientSession() as http:
        bodies = []
        for stream in (False, False, False, True):
            async with http.post(
                url, json={"model": "m", "messages": HELLO, "stream": stream}
            ) as r:
                bodies.append(await r.text())

    assert json.loads(bodies[0]) == {"custom": True}
    assert bodies[1] == "{not json"
    assert json.loads(bodies[2])["choices"][0]["message"]["reasoning_content"] == "thinking"
    assert events(bodies[3])[0][1]["choices"][0]["delta"]["reasoning_content"] == "thinking"
    assert events(bodies[3])[-1] == (None, "[DONE]")


# --- stream control --------------------------------------------------------------------------


async def test_gate_after_holds_the_stream_until_release(upstream: FakeUpstream) -> None:
    upstream.script(Reply(chunks=["one", "two", "three"], gate_after=1))
    url = upstream.openai_base_url + "/chat/completions"
    body = {"model": "m", "messages": HELLO, "stream": True}
    async with aiohttp.ClientSession() as http, http.post(url, json=body) as resp:

        async def next_content() -> str:
            while True:
                line = (await resp.content.readline()).decode().strip()
                if line.startswith("data: {") and (
                    text := json.loads(line[6:])["choices"][0]["delta"].get("content")
                ):
                    return str(text)

        # Reading "one" before release() proves the fake writes chunks as it goes.
        assert await asyncio.wait_for(next_content(), 5) == "one"
        upstream.release()
        assert [await next_content(), await next_content()] == ["two", "three"]
        assert b"data: [DONE]" in await resp.content.read()


async def test_cut_after_drops_the_connection_without_done(upstream: FakeUpstream) -> None:
    upstream.script(Reply(chunks=["a", "b", "c"], cut_after=2))
    body = {"model": "m", "max_tokens": 9, "messages": HELLO, "stream": True}
    url = upstream.anthropic_base_url + "/v1/messages"
    received = b""
    async with (
        aiohttp.ClientSession() as http,
        http.post(url, json=body, headers=ANTHROPIC_HEADERS) as resp,
    ):
        with pytest.raises(aiohttp.ClientPayloadError):
            async for line in resp.content:
                received += line

    deltas = [
        d["delta"]["text"] for e, d in events(received.decode()) if e == "content_block_delta"
    ]
    assert deltas == ["a", "b"]
    assert b"message_stop" not in received


def test_delay_postpones_the_answer(upstream: FakeUpstream, client: openai.OpenAI) -> None:
    upstream.script(Reply(delay=0.2))
    started = time.monotonic()
    client.chat.completions.create(model="m", messages=HELLO)
    assert time.monotonic() - started >= 0.2


def test_stop_returns_promptly_while_a_request_hangs() -> None:
    outcome: list[BaseException] = []
    up = FakeUpstream(name="hanging").start()
    up.script(Reply(hang=True))

    def call() -> None:
        with openai.OpenAI(base_url=up.openai_base_url, api_key="k", max_retries=0) as sdk:
            try:
                sdk.chat.completions.create(model="m", messages=HELLO, timeout=30)
            except openai.APIConnectionError as exc:
                outcome.append(exc)

    caller = threading.Thread(target=call)
    caller.start()
    up.wait_for_requests(1)
    started = time.monotonic()
    up.stop()
    assert time.monotonic() - started < 2
    caller.join(5)
    assert len(outcome) == 1


# --- Anthropic -----------------------------------------------------------------------------------


async def test_anthropic_message_translates_text_usage_and_tool_use(upstream: FakeUpstream) -> None:
    upstream.script(Reply(usage={"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}))
    upstream.script(Reply(tool_calls=[WEATHER]))
    body = {"model": "claude-x", "max_tokens": 64, "system": "be brief", "messages": HELLO}

    _, text = await anthropic_post(upstream, body)
    _, tools = await anthropic_post(upstream, body)

    assert json.loads(text) == {
        "id": "msg_fake1",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": "Hello from fake"}],
        "model": "claude-x",
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 3, "output_tokens": 4},
    }
    message = json.loads(tools)
    assert message["content"] == [
        {"type": "tool_use", "id": "call_w", "name": "get_weather", "input": {"city": "Paris"}}
    ]
    assert message["stop_reason"] == "tool_use"
    assert upstream.wait_for_requests(2)[0].protocol == "anthropic"


@pytest.mark.parametrize(
    ("headers", "body", "status", "kind"),
    [
        ({"anthropic-version": "2023-06-01"}, {}, 401, "authentication_error"),
        ({"x-api-key": "k"}, {}, 400, "invalid_request_error"),
        (ANTHROPIC_HEADERS, {"max_tokens": None}, 400, "invalid_request_error"),
        (
            ANTHROPIC_HEADERS,
            {"messages": [{"role": "tool", "content": "x"}]},
            400,
            "invalid_request_error",
        ),
    ],
)
async def test_anthropic_rejects_what_the_real_api_rejects(
    upstream: FakeUpstream, headers: dict[str, str], body: dict[str, Any], status: int, kind: str
) -> None:
    request = {"model": "claude-x", "max_tokens": 64, "messages": HELLO, **body}
    request = {k: v for k, v in request.items() if v is not None}

    got, text = await anthropic_post(upstream, request, **headers)

    error = json.loads(text)
    assert (got, error["type"], error["error"]["type"]) == (status, "error", kind)
    assert set(error["error"]) == {"type", "message"}
    assert upstream.wait_for_requests(1)  # recorded even when rejected


async def test_anthropic_error_reply_uses_the_anthropic_error_shape(upstream: FakeUpstream) -> None:
    upstream.script(Reply(status=529))
    status, text = await anthropic_post(
        upstream, {"model": "c", "max_tokens": 1, "messages": HELLO}
    )
    assert status == 529
    error = json.loads(text)
    assert error["type"] == "error" and error["error"]["type"] == "overloaded_error"
    assert "529" in error["error"]["message"]


async def test_anthropic_stream_follows_the_documented_event_sequence(
    upstream: FakeUpstream,
) -> None:
    upstream.script(Reply(chunks=["Let me ", "check."], tool_calls=[WEATHER]))
    body = {"model": "claude-x", "max_tokens": 64, "messages": HELLO, "stream": True}

    _, text = await anthropic_post(upstream, body)

    seen = events(text)
    assert all(name == data["type"] for name, data in seen)
    assert [name for name, _ in seen] == [
        "message_start",
        "content_block_start",
        "ping",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        *["content_block_delta"] * 3,
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    start = seen[0][1]["message"]
    assert (start["content"], start["model"], start["stop_reason"]) == ([], "claude-x", None)
    assert seen[6][1]["content_block"] == {
        "type": "tool_use",
        "id": "call_w",
        "name": "get_weather",
        "input": {},
    }
    partial = "".join(
        d["delta"]["partial_json"] for _, d in seen if d.get("index") == 1 and "delta" in d
    )
    assert json.loads(partial) == {"city": "Paris"}
    assert seen[-2][1]["delta"] == {"stop_reason": "tool_use", "stop_sequence": None}
    assert seen[-2][1]["usage"] == {"output_tokens": 7}
