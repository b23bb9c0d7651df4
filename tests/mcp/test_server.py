"""SPEC PR-3: the tool list and its derived schemas; bad arguments and failures come back as
is_error results with a message, and the server goes on answering."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from mcp import Client

from nerve.mcp import TOOL_NAMES
from nerve.server import NerveApp
from tests.mcp.conftest import Call, text_of

# For every tool: arguments its schema refuses, and the name the message must mention.
BAD_ARGUMENTS: dict[str, tuple[dict[str, Any], str]] = {
    "process": ({"text": 42}, "'text'"),
    "check_safety": ({"kind": "python", "content": "x"}, "'kind'"),
    "safe_execute": ({}, "'text': Field required"),
    "store_memory": ({"user_id": "u"}, "'intent': Field required"),
    "recall_memory": ({"user_id": "u", "limit": 0}, "'limit'"),
    "record_event": ({"user_id": "u", "session_id": "s", "type": "dance", "payload": {}}, "'type'"),
    "store_fact": ({"user_id": "u", "entity": "e", "attribute": "a", "value": [1],
                    "importance": 0.5}, "'value"),
    "memory_context": ({"user_id": ""}, "'user_id'"),
    "register_agent": ({"agent_name": "a", "endpoint": "http://127.0.0.1:1"}, "'capabilities'"),
    "route_agent": ({"target_agent": "a"}, "'task': Field required"),
    "route_model": ({"messages": "hello"}, "'messages'"),
    "reason": ({"prompt": ""}, "'prompt'"),
    "transcribe": ({"language": "en"}, "'audio_base64': Field required"),
    "synthesize": ({"text": "hi", "voice": 7}, "'voice'"),
}  # fmt: skip


async def test_every_tool_is_listed_with_derived_input_and_output_schemas(client: Client) -> None:
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == set(TOOL_NAMES)
    assert len(TOOL_NAMES) == 14
    for tool in tools.values():
        assert tool.description, tool.name
        assert tool.input_schema["type"] == "object"
        assert tool.output_schema is not None, f"{tool.name} has no structured output"
    store = tools["store_memory"].input_schema
    assert set(store["required"]) == {"user_id", "intent", "tier", "data", "importance_score"}
    assert store["properties"]["importance_score"]["maximum"] == 1
    kind = tools["check_safety"].input_schema["properties"]["kind"]
    assert kind["enum"] == ["shell", "sql", "text", "action"]


@pytest.mark.parametrize("tool", sorted(BAD_ARGUMENTS))
async def test_bad_arguments_are_an_error_naming_the_problem(call: Call, tool: str) -> None:
    arguments, named = BAD_ARGUMENTS[tool]
    result = await call(tool, **arguments)
    assert result.is_error
    message = text_of(result)
    assert message.startswith(f"{tool}: invalid arguments: "), message
    assert named in message
    assert "input_value" not in message  # the caller's values are not echoed back
    after = await call("check_safety", kind="shell", content="ls -la")
    assert not after.is_error  # the server still answers


async def test_an_unknown_argument_is_an_error_listing_the_known_ones(call: Call) -> None:
    result = await call("check_safety", kind="shell", content="ls", strict=True)
    assert result.is_error
    known = "content, cwd, dialect, kind, mode, roots"
    assert text_of(result) == f"check_safety: unknown argument 'strict'; it takes {known}"


async def test_an_unknown_tool_is_an_error(call: Call) -> None:
    result = await call("format_disk")
    assert result.is_error
    assert "format_disk" in text_of(result)


async def test_an_unexpected_failure_is_an_internal_error_logged_on_the_server(
    call: Call, nerve_app: NerveApp, monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise ZeroDivisionError("a bug with a secret detail")

    working = nerve_app.pipeline.safety.check
    monkeypatch.setattr(nerve_app.pipeline.safety, "check", broken)
    with caplog.at_level(logging.ERROR, logger="nerve.mcp"):
        result = await call("check_safety", kind="shell", content="ls")
    assert result.is_error
    assert text_of(result) == "check_safety: internal error; see the server log"
    assert "secret" not in text_of(result)
    [record] = [r for r in caplog.records if r.name == "nerve.mcp"]
    assert record.exc_info is not None and record.exc_info[0] is ZeroDivisionError
    monkeypatch.setattr(nerve_app.pipeline.safety, "check", working)
    assert not (await call("check_safety", kind="shell", content="ls")).is_error


async def test_each_app_has_its_own_mcp_server(nerve_app: NerveApp) -> None:
    from nerve.server import build_app

    other = build_app(nerve_app.config)
    assert other.mcp is not nerve_app.mcp
