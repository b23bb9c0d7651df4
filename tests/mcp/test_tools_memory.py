"""SPEC PR-3, ME-1..ME-6: the memory tools round trip through the same `Memory` the REST API
uses: store → recall → context, events, facts; its rules answer as is_error messages."""

from __future__ import annotations

from typing import Any

import pytest

from nerve.config import Config
from tests.conftest import make_config
from tests.fakes.upstream import FakeUpstream
from tests.mcp.conftest import ROUTES, Call, text_of
from tests.memory.conftest import backend, postgres_schema, storage_url  # noqa: F401 - fixtures


def _content(result: Any) -> dict[str, Any]:
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    out: dict[str, Any] = result.structured_content
    return out


async def test_store_then_recall_then_context_round_trip(call: Call) -> None:
    stored = _content(await call(
        "store_memory", user_id="asha", intent="preference", tier="semantic",
        data={"text": "prefers replies in Tamil"}, importance_score=0.8, language="en",
    ))  # fmt: skip
    assert stored["stored"] is True and stored["id"]

    recalled = _content(await call("recall_memory", user_id="asha", query="tamil replies"))
    [record] = recalled["records"]
    assert record["id"] == stored["id"]
    assert record["data"] == {"text": "prefers replies in Tamil"}
    assert record["tier"] == "semantic" and record["importance"] == 0.8
    assert record["score"] > 0

    context = _content(await call("memory_context", user_id="asha", query="tamil"))
    assert [item["id"] for item in context["items"]] == [stored["id"]]
    assert "prefers replies in Tamil" in context["prompt_block"]


async def test_a_memory_below_the_threshold_is_not_kept_and_says_why(call: Call) -> None:
    out = _content(await call(
        "store_memory", user_id="asha", intent="chit_chat", tier="episodic",
        data={"text": "said hello"}, importance_score=0.1,
    ))  # fmt: skip
    assert out["stored"] is False and out["id"] is None
    assert "below the threshold" in out["reason"]
    assert _content(await call("recall_memory", user_id="asha"))["records"] == []


async def test_recall_filters_by_intent_and_tier_and_limits(call: Call) -> None:
    for i in range(3):
        await call("store_memory", user_id="ravi", intent="note", tier="episodic",
                   data={"text": f"note {i}"}, importance_score=0.9)  # fmt: skip
    await call("store_memory", user_id="ravi", intent="preference", tier="semantic",
               data={"text": "likes filter coffee"}, importance_score=0.9)  # fmt: skip
    notes = _content(await call("recall_memory", user_id="ravi", intent="note", limit=2))
    assert len(notes["records"]) == 2
    assert {r["intent"] for r in notes["records"]} == {"note"}
    semantic = _content(await call("recall_memory", user_id="ravi", tier="semantic"))
    assert [r["data"]["text"] for r in semantic["records"]] == ["likes filter coffee"]


async def test_record_event_is_kept_and_found_in_the_session_context(call: Call) -> None:
    event = _content(await call(
        "record_event", user_id="asha", session_id="s1", type="outcome_task",
        payload={"task": "add pagination to GET /users"},
    ))  # fmt: skip
    assert event["stored"] is True
    context = _content(await call("memory_context", user_id="asha", session_id="s2"))
    [item] = context["items"]
    assert item["source"] == "active_task"
    assert item["kind"] == "event" and item["id"] == event["id"]
    assert "add pagination to GET /users" in context["prompt_block"]


async def test_memory_context_carries_a_past_sessions_digest_to_mcp_clients(call: Call) -> None:
    """ME-6: the structured digest of a recent session survives the MCP result model."""
    for kind, payload in (
        ("outcome_task", {"task": "fix KeyError in login"}),
        ("eye_read", {"path": "app/login.py"}),
        ("body_bash", {"command": "pytest -q", "exit_code": 0}),
        ("outcome_done", {"score": 0.9, "summary": "guarded the lookup"}),
    ):
        await call("record_event", user_id="asha", session_id="s1", type=kind, payload=payload)
    context = _content(await call("memory_context", user_id="asha", session_id="s2"))
    [item] = [i for i in context["items"] if i["source"] == "recent_session"]
    assert item["session"]["task"] == "fix KeyError in login"
    assert item["session"]["score"] == 0.9
    assert "app/login.py" in item["session"]["read"]
    assert "pytest -q" in str(item["session"]["commands"])


async def test_store_fact_keeps_the_latest_value(call: Call) -> None:
    first = _content(await call("store_fact", user_id="asha", entity="asha", attribute="city",
                                value="Chennai", importance=0.9, session_id="s1"))  # fmt: skip
    second = _content(await call("store_fact", user_id="asha", entity="asha", attribute="city",
                                 value="Bengaluru", importance=0.9))  # fmt: skip
    assert first["id"] == second["id"]  # one fact per (entity, attribute)
    facts = _content(await call("recall_memory", user_id="asha", kind="fact"))
    [fact] = facts["records"]
    assert fact["data"] == {"entity": "asha", "attribute": "city", "value": "Bengaluru"}


@pytest.mark.parametrize(
    ("arguments", "names"),
    [
        ({"user_id": "a", "intent": "x", "tier": "forever", "data": {}, "importance_score": 0.5},
         "'tier'"),
        ({"user_id": "a", "intent": "x", "tier": "semantic", "data": {}, "importance_score": 1.5},
         "'importance_score'"),
        ({"user_id": "a", "intent": "x", "tier": "semantic", "data": "text",
          "importance_score": 0.5}, "'data'"),
        ({"intent": "x", "tier": "semantic", "data": {}, "importance_score": 0.5}, "'user_id'"),
    ],
)  # fmt: skip
async def test_bad_store_arguments_are_errors_naming_the_field(
    call: Call, arguments: dict[str, Any], names: str
) -> None:
    result = await call("store_memory", **arguments)
    assert result.is_error
    assert result.structured_content is None
    assert text_of(result).startswith("store_memory: invalid arguments: ")
    assert names in text_of(result)


async def test_memory_rules_come_back_as_messages(call: Call) -> None:
    result = await call("record_event", user_id="asha", session_id="s1", type="eye_read",
                        payload={"summary": "no path"})  # fmt: skip
    assert result.is_error
    assert text_of(result) == "record_event: 'payload.path' of a eye_read event: Field required"
    result = await call("recall_memory", user_id="   ")  # refused by its schema, as over REST
    assert result.is_error
    assert text_of(result) == "recall_memory: invalid arguments: 'user_id': must not be blank"


class TestMemoryDisabled:
    @pytest.fixture
    def mcp_config(self, upstream: FakeUpstream) -> Config:
        return make_config({"primary": upstream}, ROUTES, memory={"enabled": False})

    async def test_memory_tools_say_memory_is_disabled(self, call: Call) -> None:
        result = await call("recall_memory", user_id="asha")
        assert result.is_error
        assert "memory is disabled" in text_of(result)
        assert not (await call("check_safety", kind="text", content="hello")).is_error


class TestTextRules:
    """Issue 13: a NUL in a memory was an "internal error" (the store refused it); now every
    memory tool refuses control characters and blank user ids naming the argument, on SQLite
    and PostgreSQL alike, as the REST routes do (the same types: memory/fields.py)."""

    @pytest.fixture
    def mcp_config(self, upstream: FakeUpstream, storage_url: str) -> Config:  # noqa: F811
        return make_config({"primary": upstream}, ROUTES, storage={"url": storage_url})

    @pytest.mark.parametrize(
        ("tool", "arguments", "named"),
        [
            ("store_memory", {"user_id": "asha", "intent": "note", "tier": "semantic",
                              "data": {"text": "a\u0000b"}, "importance_score": 0.9}, "data.text"),
            ("store_memory", {"user_id": "asha", "intent": "note", "tier": "semantic",
                              "data": {"k": [{"\u001b": 1}]}, "importance_score": 0.9}, "data.k.0"),
            ("store_fact", {"user_id": "asha", "entity": "asha", "attribute": "city",
                            "value": "Chen\u0000nai", "importance": 0.9}, "'value'"),
            ("record_event", {"user_id": "asha", "session_id": "s1", "type": "outcome_task",
                              "payload": {"task": "\u0000"}}, "payload.task"),
            ("recall_memory", {"user_id": "asha\u0000"}, "'user_id'"),
            ("memory_context", {"user_id": "asha", "query": "\u0007"}, "'query'"),
        ],
    )  # fmt: skip
    async def test_a_control_character_is_an_error_naming_the_argument(
        self, call: Call, tool: str, arguments: dict[str, Any], named: str
    ) -> None:
        result = await call(tool, **arguments)
        assert result.is_error
        assert text_of(result).startswith(f"{tool}: invalid arguments: ")
        assert named in text_of(result) and "control characters" in text_of(result)
        assert _content(await call("recall_memory", user_id="asha"))["records"] == []

    @pytest.mark.parametrize("tool", ["recall_memory", "memory_context"])
    async def test_a_blank_user_id_is_an_error_naming_it(self, call: Call, tool: str) -> None:
        result = await call(tool, user_id=" \t")
        assert result.is_error
        assert text_of(result) == f"{tool}: invalid arguments: 'user_id': must not be blank"
