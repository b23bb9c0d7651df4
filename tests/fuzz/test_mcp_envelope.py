"""SPEC PR-3: whatever is POSTed to /mcp, the server answers it as JSON-RPC 2.0 and MCP's
streamable HTTP say, and goes on serving: generated envelopes (ids, methods and params of
every JSON type, batches, garbage bytes) against a real server."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from nerve.config import Config
from tests.conftest import RunningServer, make_config
from tests.fakes.upstream import FakeUpstream

HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
METHODS = ["ping", "initialize", "tools/list", "tools/call", "resources/list", "prompts/list",
           "notifications/initialized", "notifications/cancelled"]  # fmt: skip

scalars = (
    st.none() | st.booleans() | st.integers() | st.text(max_size=8)
    | st.floats(allow_nan=False, allow_infinity=False)
)  # fmt: skip
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)
ids = st.integers() | st.text(max_size=8)
methods = st.sampled_from(METHODS) | st.text(max_size=12)
objects = st.dictionaries(st.text(max_size=6), values, max_size=3)
requests = st.fixed_dictionaries(
    {"jsonrpc": st.just("2.0"), "id": ids, "method": methods}, optional={"params": objects}
)
notifications = st.fixed_dictionaries(
    {"jsonrpc": st.just("2.0"), "method": methods}, optional={"params": objects}
)
results = st.fixed_dictionaries({"jsonrpc": st.just("2.0"), "id": ids, "result": objects})
errors = st.fixed_dictionaries({
    "jsonrpc": st.just("2.0"), "id": ids | st.none(),
    "error": st.fixed_dictionaries({"code": st.integers(), "message": st.text(max_size=8)}),
})  # fmt: skip
valid = requests | notifications | results | errors
MEMBERS = ["jsonrpc", "id", "method", "params", "result", "error"]
DROP = object()


def changed(message: dict[str, Any], member: str, value: object) -> dict[str, Any]:
    """`message` with one member set to `value`, or left out (DROP)."""
    if value is DROP:
        return {k: v for k, v in message.items() if k != member}
    return {**message, member: value}


one_off = st.builds(changed, valid, st.sampled_from(MEMBERS), values | st.just(DROP))
# Anything at all: each member there or not, of any type.
anything = st.fixed_dictionaries({}, optional=dict.fromkeys(MEMBERS, values))


def encoded(messages: st.SearchStrategy[Any]) -> st.SearchStrategy[bytes]:
    return messages.map(json.dumps).map(str.encode)


bodies = st.one_of(
    encoded(valid), encoded(valid),  # twice: more of what is sent gets past the envelope
    encoded(one_off), encoded(anything), encoded(values), st.binary(max_size=40),
    encoded(st.lists(valid | one_off | anything, max_size=3)),  # batches
)  # fmt: skip


def is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_id(value: object) -> bool:
    return isinstance(value, str) or is_int(value)


def acceptable_without_answer(message: Any) -> bool:
    """A notification or a response: what streamable HTTP acknowledges with 202, no body."""
    if not (isinstance(message, dict) and message.get("jsonrpc") == "2.0"):
        return False
    if "method" in message:
        return ("id" not in message and isinstance(message["method"], str)
                and isinstance(message.get("params", {}), dict)
                and "result" not in message and "error" not in message)  # fmt: skip
    if "result" in message:
        return "error" not in message and is_id(message.get("id"))
    error = message.get("error")
    id_ok = is_id(message.get("id")) or ("id" in message and message["id"] is None)
    return (id_ok and isinstance(error, dict) and is_int(error.get("code"))
            and isinstance(error.get("message"), str))  # fmt: skip


def answerable_request(message: Any) -> bool:
    """A request whose id can be told: its answer carries that id."""
    return (isinstance(message, dict) and message.get("jsonrpc") == "2.0"
            and isinstance(message.get("method"), str) and is_id(message.get("id")))  # fmt: skip


def check_answer(body: bytes, answer: httpx.Response) -> None:
    try:
        message = json.loads(body)
    except ValueError:
        message = None
    assert answer.status_code < 500, answer.text
    if answer.status_code == 202:
        assert answer.content == b"" and acceptable_without_answer(message), body
        return
    assert answer.status_code in (200, 400), (body, answer.status_code, answer.text)
    reply = answer.json()
    assert reply["jsonrpc"] == "2.0" and ("result" in reply) != ("error" in reply), reply
    if "error" in reply:
        assert isinstance(reply["error"]["code"], int), reply
        assert isinstance(reply["error"]["message"], str), reply
    sent = message.get("id") if isinstance(message, dict) else None
    if answerable_request(message):
        assert reply["id"] == sent, (body, reply)
    else:  # not a valid request: an error, with the id if one could be told (§5)
        assert "error" in reply and reply["id"] in (None, sent), (body, reply)
        assert reply["id"] is None or is_id(sent), (body, reply)


@pytest.fixture
def server(serve: Callable[[Config], RunningServer], upstream: FakeUpstream) -> RunningServer:
    return serve(make_config({"primary": upstream}))


def test_any_body_gets_a_json_rpc_answer_or_a_202_and_the_server_keeps_serving(
    server: RunningServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR)
    with httpx.Client(base_url=server.url, headers=HEADERS, timeout=10) as http:

        @settings(max_examples=200, derandomize=True, deadline=None, database=None,
                  suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
        @given(bodies)
        def post(body: bytes) -> None:
            check_answer(body, http.post("/mcp", content=body))

        post()

    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
    assert asyncio.run(safety_verdict(f"{server.url}/mcp")) is False


async def safety_verdict(url: str) -> object:
    async with Client(url) as client:
        result = await client.call_tool("check_safety", {"kind": "sql", "content": "DROP TABLE x"})
    assert result.structured_content is not None
    return result.structured_content["allowed"]
