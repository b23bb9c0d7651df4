"""Over /mcp the tools act with the HTTP request's key: a key limited to some users
(server.api_keys `users`) may only name those in the memory and pipeline tools; a refusal is an
is_error result naming the user. The SDK's Context, which carries the request, is not in any
tool's schema."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from nerve.config import Config
from tests.conftest import RunningServer, make_config
from tests.fakes.upstream import FakeUpstream
from tests.mcp.conftest import text_of

BOT, FULL = "sk-bot-only-ci-bot", "sk-full-access"
Serve = Callable[[Config], RunningServer]
Connect = Callable[[str], AbstractAsyncContextManager[ClientSession]]


def memory_calls(user: str) -> dict[str, dict[str, Any]]:
    """Every tool that reads or writes a user's data, with arguments acting for `user`."""
    return {
        "store_memory": {"user_id": user, "intent": "preference", "tier": "semantic",
                         "data": {"text": "prefers short answers"}, "importance_score": 0.8},
        "recall_memory": {"user_id": user},
        "record_event": {"user_id": user, "session_id": "s1", "type": "outcome_task",
                         "payload": {"task": "fix the build"}},
        "store_fact": {"user_id": user, "entity": user, "attribute": "city",
                       "value": "Chennai", "importance": 0.8},
        "memory_context": {"user_id": user},
        "process": {"text": "list the files", "user_id": user},
        "safe_execute": {"text": "list the files", "user_id": user},
    }  # fmt: skip


@pytest.fixture
def connect(serve: Serve, upstream: FakeUpstream) -> Connect:
    keys = [{"name": "bot", "key": BOT, "users": ["ci-bot"]}, FULL]
    server = serve(make_config({"primary": upstream}, server={"api_keys": keys}))

    @asynccontextmanager
    async def session(key: str) -> AsyncIterator[ClientSession]:
        async with (
            httpx2.AsyncClient(headers={"authorization": f"Bearer {key}"}) as http,
            streamable_http_client(f"{server.url}/mcp", http_client=http) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            yield client

    return session


async def test_a_limited_key_uses_every_user_tool_for_its_user(connect: Connect) -> None:
    async with connect(BOT) as client:
        for name, arguments in memory_calls("ci-bot").items():
            result = await client.call_tool(name, arguments)
            assert not result.is_error, (name, text_of(result))


async def test_a_limited_key_is_refused_for_another_user_as_a_tool_error_naming_them(
    connect: Connect,
) -> None:
    async with connect(BOT) as client:
        for name, arguments in memory_calls("asha").items():
            result = await client.call_tool(name, arguments)
            assert result.is_error, name
            assert text_of(result).startswith(f"{name}: key 'bot' may not act for user 'asha'")
    async with connect(FULL) as client:
        recalled = await client.call_tool("recall_memory", {"user_id": "asha"})
    assert recalled.structured_content == {"records": []}  # nothing was written for asha


async def test_a_key_without_a_users_limit_acts_for_anyone(connect: Connect) -> None:
    async with connect(FULL) as client:
        for name, arguments in memory_calls("asha").items():
            result = await client.call_tool(name, arguments)
            assert not result.is_error, (name, text_of(result))


async def test_process_without_a_user_acts_for_the_keys_first_user(connect: Connect) -> None:
    async with connect(BOT) as client:
        assert not (await client.call_tool("process", {"text": "show the logs"})).is_error
    async with connect(FULL) as client:
        recalled = await client.call_tool("recall_memory", {"user_id": "ci-bot"})
    assert recalled.structured_content is not None
    [record] = recalled.structured_content["records"]
    assert record["data"]["text"] == "show the logs"


async def test_the_context_parameter_is_no_tools_argument(connect: Connect) -> None:
    async with connect(BOT) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        sent = await client.call_tool("recall_memory", {"user_id": "ci-bot", "ctx": {}})
    for name in memory_calls("u"):
        properties = tools[name].input_schema["properties"]
        assert "ctx" not in properties and "user_id" in properties, name
    assert sent.is_error and "unknown argument 'ctx'" in text_of(sent)
