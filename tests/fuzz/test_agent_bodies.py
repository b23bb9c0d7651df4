"""GW-16 on the agents' protocols: whatever body is POSTed to /v1/messages or /v1/responses, the
answer is a 200 or a 4xx in that protocol's error shape (Anthropic's {"type": "error", ...} on
/v1/messages), never a 5xx, and the server goes on serving.

The generated bodies follow test_chat_body's recipe: right-shaped requests, one field off, any
field of any JSON type, and raw bytes broken in every way `as_bytes` knows. The server is the
same (an OpenAI provider with an Anthropic fallback), so Messages bodies meet both the
translation (model `default`) and the passthrough (`anthropic/claude-fuzz`), and Responses
bodies the translation.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import RunningServer
from tests.fuzz.test_chat_body import (
    DROP,
    OPENAI_TYPES,
    as_bytes,
    changed,
    either,
    server,
    text,
    values,
    weighted,
)

__all__ = ["server"]  # the fixture, shared with test_chat_body

MODELS = ["default", "anthropic/claude-fuzz", "auto", "claude-nope", "primary/m1"]
ANTHROPIC_TYPES = frozenset(
    {"invalid_request_error", "not_found_error", "authentication_error", "permission_error",
     "rate_limit_error", "request_too_large"}
)  # fmt: skip

# --- Anthropic Messages bodies ---------------------------------------------------------------

block = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": text},
                          optional={"cache_control": st.just({"type": "ephemeral"})}),
    st.fixed_dictionaries({"type": st.just("tool_use"), "id": text, "name": text,
                           "input": st.dictionaries(text, values, max_size=2)}),
    st.fixed_dictionaries({"type": st.just("tool_result"), "tool_use_id": text},
                          optional={"content": text, "is_error": st.booleans()}),
    st.fixed_dictionaries({"type": st.just("thinking"), "thinking": text, "signature": text}),
)  # fmt: skip
turn = st.fixed_dictionaries({
    "role": either(st.sampled_from(["user", "assistant", "system"])),
    "content": either(text | st.lists(either(block), min_size=1, max_size=3)),
})  # fmt: skip
tool = st.fixed_dictionaries({"name": text, "input_schema": st.just({"type": "object"})},
                             optional={"description": text})  # fmt: skip
MESSAGES_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "system": text | st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": text}),
                              max_size=2),
    "stream": st.booleans(),
    "temperature": st.floats(0, 1),
    "stop_sequences": st.lists(text, max_size=2),
    "tools": st.lists(tool, max_size=2),
    "tool_choice": st.fixed_dictionaries({"type": st.sampled_from(["auto", "any", "none"])}),
    "metadata": st.fixed_dictionaries({}, optional={"user_id": text}),
    "thinking": st.fixed_dictionaries({"type": st.just("enabled"),
                                       "budget_tokens": st.integers(1024, 4096)}),
}  # fmt: skip
messages_valid = st.fixed_dictionaries(
    {"model": st.sampled_from(MODELS[:2]), "max_tokens": st.integers(1, 4096),
     "messages": st.lists(turn, min_size=1, max_size=3)},
    optional=MESSAGES_FIELDS,
)  # fmt: skip

# --- OpenAI Responses bodies -----------------------------------------------------------------

item = st.one_of(
    st.fixed_dictionaries({"type": st.just("message"),
                           "role": either(st.sampled_from(["user", "developer", "assistant"])),
                           "content": either(text | st.lists(st.fixed_dictionaries(
                               {"type": st.sampled_from(["input_text", "output_text"]),
                                "text": text}), max_size=2))}),
    st.fixed_dictionaries({"type": st.just("function_call"), "call_id": text, "name": text,
                           "arguments": either(st.just("{}"))}),
    st.fixed_dictionaries({"type": st.just("function_call_output"), "call_id": text,
                           "output": either(text)}),
    st.fixed_dictionaries({"type": st.just("custom_tool_call"), "call_id": text, "name": text,
                           "input": either(text)}),
    st.fixed_dictionaries({"type": either(st.sampled_from(["reasoning", "web_search_call"]))}),
)  # fmt: skip
responses_tool = st.one_of(
    st.fixed_dictionaries({"type": st.just("function"), "name": text},
                          optional={"parameters": st.just({"type": "object"})}),
    st.fixed_dictionaries({"type": st.just("custom"), "name": text}),
    st.fixed_dictionaries({"type": st.sampled_from(["web_search", "namespace", "local_shell"])},
                          optional={"name": text, "tools": st.just([])}),
)  # fmt: skip
RESPONSES_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "instructions": text,
    "stream": st.booleans(),
    "store": st.booleans(),
    "tools": st.lists(responses_tool, max_size=3),
    "tool_choice": st.sampled_from(["auto", "none", "required"]) | values,
    "max_output_tokens": st.integers(1, 4096),
    "reasoning": st.fixed_dictionaries({"effort": st.sampled_from(["low", "high"])}),
    "text": st.fixed_dictionaries({"format": st.fixed_dictionaries(
        {"type": st.sampled_from(["text", "json_object", "json_schema", "yaml"])})}),
    "previous_response_id": text,
}  # fmt: skip
responses_valid = st.fixed_dictionaries(
    {"model": st.sampled_from(MODELS[:1]), "input": text | st.lists(item, min_size=1, max_size=3)},
    optional=RESPONSES_FIELDS,
)  # fmt: skip


def mutated(valid: st.SearchStrategy[dict[str, Any]], fields: list[str]) -> Any:
    """Right-shaped bodies, one field off (or gone), any field of any type, and anything."""
    one_off = st.builds(changed, valid, st.sampled_from(fields), values | st.just(DROP))
    models = st.builds(changed, valid, st.just("model"), st.sampled_from(MODELS) | text)
    anything = st.dictionaries(st.sampled_from(fields), values, max_size=4)
    return weighted((2, valid), (2, one_off), (1, models), (1, anything))


# --- what every answer must be ---------------------------------------------------------------


def check_messages(raw: bytes, r: httpx.Response) -> None:
    assert r.status_code in (200, 400, 404, 413), (raw[:300], r.status_code, r.text[:500])
    if r.status_code == 200:
        if r.headers["content-type"].startswith("text/event-stream"):
            assert "event: message_stop" in r.text, r.text[-300:]
        else:
            assert r.json()["type"] == "message", r.text[:300]
        return
    answer = r.json()
    assert answer["type"] == "error", answer
    assert answer["error"]["type"] in ANTHROPIC_TYPES and answer["error"]["message"], answer


def check_responses(raw: bytes, r: httpx.Response) -> None:
    assert r.status_code in (200, 400, 404, 413), (raw[:300], r.status_code, r.text[:500])
    if r.status_code == 200:
        if r.headers["content-type"].startswith("text/event-stream"):
            assert "event: response.completed" in r.text, r.text[-300:]
        else:
            assert r.json()["object"] == "response", r.text[:300]
        return
    error = r.json()["error"]
    assert error["type"] in OPENAI_TYPES and error["message"] and "code" in error, error
    try:
        body = json.loads(raw)
    except ValueError:
        return
    if isinstance(body, dict) and error["type"] == "invalid_request_error" and error["param"]:
        root = str(error["param"]).split(".")[0].split("[")[0]
        assert root in (*body, "model", "input"), (raw[:300], error)


ENDPOINTS = [
    ("/v1/messages", mutated(messages_valid, ["model", "max_tokens", "messages",
                                              *MESSAGES_FIELDS]), check_messages, 500),
    ("/v1/responses", mutated(responses_valid, ["model", "input", *RESPONSES_FIELDS]),
     check_responses, 500),
]  # fmt: skip


@pytest.mark.parametrize(("path", "bodies", "check", "examples"), ENDPOINTS,
                         ids=[e[0] for e in ENDPOINTS])  # fmt: skip
def test_any_agent_body_gets_a_200_or_a_4xx_in_its_protocols_shape(
    server: RunningServer, path, bodies, check, examples, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR)
    with httpx.Client(base_url=server.url, timeout=10,
                      headers={"content-type": "application/json"}) as http:  # fmt: skip

        @settings(max_examples=examples, derandomize=True, deadline=None, database=None,
                  suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
        @given(as_bytes(bodies))
        def post(raw: bytes) -> None:
            check(raw, http.post(path, content=raw))

        post()
        health = http.get("/health").json()
    assert health["status"] == "ok" and health["breakers_not_closed"] == [], health
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
