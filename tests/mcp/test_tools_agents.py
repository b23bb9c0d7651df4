"""SPEC PR-3, PR-4: register_agent and route_agent over MCP reach a real agent on loopback; an
unreachable or failing agent is a result saying so (success false, fallback), not an error."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.agents.fake_agent import FakeAgent, free_port
from tests.mcp.conftest import Call, text_of


@pytest.fixture
def agent() -> Iterator[FakeAgent]:
    with FakeAgent("helper") as fake:
        yield fake


def _content(result: Any) -> dict[str, Any]:
    assert not result.is_error, text_of(result)
    out: dict[str, Any] = result.structured_content
    return out


async def test_a_registered_agent_gets_the_task_and_its_answer_comes_back(
    call: Call, agent: FakeAgent
) -> None:
    endpoint = f"{agent.url}/echo"
    registered = _content(await call("register_agent", agent_name="helper", endpoint=endpoint,
                                     capabilities=["summarize"]))  # fmt: skip
    assert registered["agent_name"] == "helper"
    assert registered["capabilities"] == ["summarize"]

    routed = _content(await call("route_agent", target_agent="helper", task="summarize",
                                 payload={"text": "a long report"}))  # fmt: skip
    assert routed["success"] is True and routed["agent"] == "helper"
    assert routed["result"] == {
        "echo": {"task": "summarize", "payload": {"text": "a long report"}},
        "agent": "helper",
    }
    assert agent.bodies("/echo") == [{"task": "summarize", "payload": {"text": "a long report"}}]


async def test_an_unreachable_agent_is_a_failed_result_not_an_error(call: Call) -> None:
    endpoint = f"http://127.0.0.1:{free_port()}/"
    await call("register_agent", agent_name="gone", endpoint=endpoint, capabilities=["x"])
    routed = _content(await call("route_agent", target_agent="gone", task="x"))
    assert routed["success"] is False and routed["fallback"] is True
    assert "unreachable" in routed["error"]


async def test_routing_to_an_unknown_agent_says_none_is_registered(call: Call) -> None:
    routed = _content(await call("route_agent", target_agent="nobody", task="x", payload={}))
    assert routed["success"] is False
    assert "no agent named 'nobody'" in routed["error"]


async def test_a_refused_endpoint_is_an_error_naming_it(call: Call) -> None:
    result = await call("register_agent", agent_name="outside",
                        endpoint="http://203.0.113.7/agent", capabilities=[])  # fmt: skip
    assert result.is_error
    assert text_of(result).startswith("register_agent: 'endpoint' ")
