"""Request validation at the HTTP edge (GW-16): every field nerve reads has its type checked, and
a bad one is a 400 naming it before any upstream is called. Chat and the fan-out routes alike."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.conftest import make_config

URL = "/v1/chat/completions"
MSG = [{"role": "user", "content": "hi"}]


@pytest.fixture
def server(serve, upstream):
    return serve(make_config({"primary": upstream}))


def post(server, body: Any, path: str = URL) -> httpx.Response:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(
        f"{server.url}{path}", content=raw, headers={"content-type": "application/json"}, timeout=10
    )


def refused(response: httpx.Response, param: str | None) -> dict[str, Any]:
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error" and error["message"]
    assert error["param"] == param
    return error


@pytest.mark.parametrize("role", [[], {}, ["user"], {"user": 1}, 3, True, None, "robot"])
def test_a_role_that_is_not_a_known_string_is_a_400_naming_it(server, upstream, role):
    """Issue 13.2: an array or object as a role was an unhashable-type 500."""
    r = post(server, {"model": "default", "messages": [{"role": role, "content": "hi"}]})
    refused(r, "messages[0].role")
    assert upstream.requests == []


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/task", {"route": "default"}),
        ("/analysis", {}),
        ("/parallel", {"models": ["default"]}),
    ],
)
def test_the_fan_out_routes_refuse_a_bad_role_naming_it(server, upstream, path, body):
    """Issue 13.2: /task, /analysis and /parallel validate the chat body the same way."""
    r = post(server, {**body, "messages": [{"role": [], "content": "hi"}]}, path)
    refused(r, "messages[0].role")
    assert upstream.requests == []


@pytest.mark.parametrize(
    ("fields", "param"),
    [
        ({"stream": "yes"}, "stream"),
        ({"stream": True, "stream_options": []}, "stream_options"),
        (
            {"stream": True, "stream_options": {"include_usage": "no"}},
            "stream_options.include_usage",
        ),
        ({"max_tokens": "100"}, "max_tokens"),
        ({"max_tokens": 1.5}, "max_tokens"),
        ({"max_tokens": True}, "max_tokens"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"max_completion_tokens": [5]}, "max_completion_tokens"),
        ({"n": "2"}, "n"),
        ({"n": 0}, "n"),
        ({"user": 42}, "user"),
        ({"user": {"id": "u"}}, "user"),
        ({"stop": 5}, "stop"),
        ({"stop": ["end", 1]}, "stop"),
        ({"tools": "get_weather"}, "tools"),
        ({"tools": [1]}, "tools[0]"),
        ({"parallel_tool_calls": "false"}, "parallel_tool_calls"),
        ({"temperature": "hot"}, "temperature"),
        ({"top_p": []}, "top_p"),
        ({"messages": [{"role": "user", "content": [1]}]}, "messages[0].content[0]"),
        ({"messages": [{"role": "user", "content": {"text": "hi"}}]}, "messages[0].content"),
        (
            {"messages": [{"role": "assistant", "content": None, "tool_calls": {}}]},
            "messages[0].tool_calls",
        ),
        (
            {"messages": [{"role": "assistant", "content": None, "tool_calls": ["x"]}]},
            "messages[0].tool_calls[0]",
        ),
        (
            {"messages": [{"role": "tool", "content": "42", "tool_call_id": 7}]},
            "messages[0].tool_call_id",
        ),
    ],
)
def test_a_field_nerve_reads_with_the_wrong_type_is_a_400_naming_it(
    server, upstream, fields, param
):
    """Issue 13.2: admission reads max_tokens and user, the Anthropic translation n, stop,
    tools, temperature...; a wrong type is refused at the edge, not guessed at below."""
    r = post(server, {"model": "default", "messages": MSG, **fields})
    refused(r, param)
    assert upstream.requests == []


def test_well_typed_fields_and_nulls_pass_through_unchanged(server, upstream):
    """The checks refuse only what is wrong: nulls and well-typed values reach the upstream."""
    fields = {
        "max_tokens": 5, "max_completion_tokens": None, "n": 1, "user": "u-1", "stop": ["END"],
        "temperature": 0, "top_p": 0.9, "parallel_tool_calls": False, "stream_options": None,
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
    }  # fmt: skip
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "hi"}], "name": "ann"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "content": "42", "tool_call_id": "c1"},
    ]  # fmt: skip
    r = post(server, {"model": "default", "messages": messages, **fields})
    assert r.status_code == 200, r.text
    sent = upstream.requests[-1].body
    assert {k: sent[k] for k in fields} == fields and sent["messages"] == messages


# --- model names: they go into the x-nerve-model header --------------------------------------


@pytest.mark.parametrize(
    "model",
    [
        "primary/m1\r\nx-injected: 1",
        "primary/m1\n",
        "primary/m\x00",
        "primary/m\x1b[31m",
        "primary/m\x7f",
        "primary/m\x85",
        "primary/m\u2028",
        "primary/m\u202e",  # right-to-left override: a format character
        "default\t",
        "primary/" + "m" * 300,
    ],
)
def test_a_model_name_that_cannot_be_shown_is_refused_before_any_upstream_call(
    server, upstream, model
):
    """Issue 13.4: a control character in `model` went into x-nerve-model; the server refused
    the header, so the client got no answer at all, after the upstream was called and billed."""
    r = post(server, {"model": model, "messages": MSG})
    refused(r, "model")
    assert upstream.requests == []


@pytest.mark.parametrize(
    "name",
    [
        "meta-llama/Llama-3.1-8B-Instruct",
        "llama3.1:8b-instruct-q4_K_M",
        "@cf/meta/llama-3-8b-instruct",
        "anthropic.claude-3-sonnet-20240229-v1:0",
        "openai/gpt-oss-120b:free",
        "my model (v2)",
    ],
)
def test_real_world_model_names_reach_the_upstream_as_sent(server, upstream, name):
    r = post(server, {"model": f"primary/{name}", "messages": MSG})
    assert r.status_code == 200, r.text
    assert upstream.requests[-1].body["model"] == name
    assert r.headers["x-nerve-model"] == name


def test_a_non_ascii_model_name_is_served_and_its_header_is_percent_encoded(server, upstream):
    """Printable Unicode is a model name like any other; the header carries it %-encoded."""
    r = post(server, {"model": "primary/modèle-日本", "messages": MSG})
    assert r.status_code == 200, r.text
    assert upstream.requests[-1].body["model"] == "modèle-日本"
    assert r.headers["x-nerve-model"] == "mod%C3%A8le-%E6%97%A5%E6%9C%AC"


def test_a_configured_model_name_with_a_control_character_still_gets_an_answer(serve, upstream):
    """Defence in depth: the config does not check model names, so the headers escape them."""
    route = {"name": "default", "model": {"provider": "primary", "model": "m1\r\nx: y"}}
    server = serve(make_config({"primary": upstream}, routes=[route]))
    r = post(server, {"model": "default", "messages": MSG})
    assert r.status_code == 200, r.text
    assert r.headers["x-nerve-model"] == "m1%0D%0Ax: y"
    assert "x" not in r.headers


@pytest.mark.parametrize(
    ("path", "body"),
    [("/task", {"route": "default"}), ("/parallel", {"models": ["default", "primary/m2"]})],
)
def test_a_fan_out_body_that_asks_to_stream_gets_complete_answers(server, upstream, path, body):
    """The fan-out answers in one piece: `stream` is turned off on the way to the upstream,
    not forwarded to come back as an event stream the provider took for broken JSON (502, and
    a failure counted against the breaker)."""
    options = {"stream": True, "stream_options": {"include_usage": True}}
    r = post(server, {**body, "messages": MSG, **options}, path)
    assert r.status_code == 200, r.text
    assert "Hello from fake" in r.text and "fallback" in r.text
    assert all(req.body["stream"] is False for req in upstream.requests)
    assert all("stream_options" not in req.body for req in upstream.requests)
