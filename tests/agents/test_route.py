"""route_agent over real HTTP (SPEC PR-4): a tiny agent on loopback answers {task, payload};
unknown, unreachable, slow, failing and non-JSON agents become `fallback: true` data, never
exceptions; retries only for idempotent tasks."""

from __future__ import annotations

import pytest

from nerve.errors import RequestError
from tests.agents.fake_agent import free_port


async def test_a_task_is_posted_as_json_and_the_agents_json_comes_back(local, agent):
    registry = await local()
    await registry.register("helper", f"{agent.url}/echo", ["summarize"])
    result = await registry.route("helper", "summarize", {"text": "long", "n": [1, 2.5, None]})
    assert result["success"] is True and result["agent"] == "helper"
    assert result["result"] == {
        "echo": {"task": "summarize", "payload": {"text": "long", "n": [1, 2.5, None]}},
        "agent": "helper",
    }
    assert result["latency_ms"] >= 0
    assert agent.hits("/echo") == 1


async def test_an_unknown_agent_is_a_fallback_not_an_exception(local):
    registry = await local()
    assert await registry.route("ghost", "summarize", {}) == {
        "success": False,
        "error": "no agent named 'ghost' is registered",
        "fallback": True,
        "agent": "ghost",
    }


async def test_an_unreachable_agent_is_a_fallback(local):
    registry = await local()
    await registry.register("gone", f"http://127.0.0.1:{free_port()}/", ["x"])
    result = await registry.route("gone", "x", {})
    assert result["success"] is False and result["fallback"] is True and result["agent"] == "gone"
    assert "agent 'gone' failed: unreachable" in result["error"]


async def test_an_agent_that_hangs_times_out(local, agent):
    registry = await local(timeout_seconds=0.2)
    await registry.register("slow", f"{agent.url}/hang", ["x"])
    result = await registry.route("slow", "x", {}, idempotent=False)
    assert result["success"] is False and result["fallback"] is True
    assert "timed out after 0.2s" in result["error"]
    assert agent.hits("/hang") == 1


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/text", "not JSON (text/plain"),
        ("/fail", "answered HTTP 500: boom"),
        ("/nowhere", "answered HTTP 404"),
        ("/big", "answered more than 1000 bytes (agents.max_response_bytes)"),
    ],
)
async def test_bad_answers_are_fallbacks_saying_what_was_wrong(local, agent, path, expected):
    registry = await local(max_response_bytes=1000, retries=0)
    await registry.register("odd", f"{agent.url}{path}", ["x"])
    result = await registry.route("odd", "x", {})
    assert result["success"] is False and result["fallback"] is True
    assert expected in result["error"]


async def test_an_idempotent_task_is_retried_with_exponential_backoff(local, agent):
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    registry = await local(retries=2, backoff_seconds=0.1, sleep=sleep)
    await registry.register("flaky", f"{agent.url}/fail", ["x"])
    result = await registry.route("flaky", "x", {}, idempotent=True)
    assert result["success"] is False and "after 3 attempts" in result["error"]
    assert agent.hits("/fail") == 3
    assert waits == [0.1, 0.2]


async def test_a_task_that_is_not_idempotent_is_tried_once(local, agent):
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    registry = await local(retries=2, sleep=sleep)
    await registry.register("flaky", f"{agent.url}/fail", ["x"])
    result = await registry.route("flaky", "x", {})
    assert result["success"] is False
    assert agent.hits("/fail") == 1 and waits == []


async def test_an_answer_that_will_not_change_is_not_retried_even_when_idempotent(local, agent):
    registry = await local(retries=2)
    await registry.register("odd", f"{agent.url}/text", ["x"])
    assert (await registry.route("odd", "x", {}, idempotent=True))["success"] is False
    assert agent.hits("/text") == 1


async def test_a_redirect_on_the_same_host_is_followed(local, agent):
    registry = await local()
    await registry.register("moved", f"{agent.url}/redirect-here", ["x"])
    result = await registry.route("moved", "x", {"a": 1})
    assert result["success"] is True and result["result"]["echo"]["payload"] == {"a": 1}
    assert agent.hits("/echo") == 1


async def test_a_malformed_call_is_a_request_error(local, agent):
    registry = await local()
    await registry.register("helper", f"{agent.url}/echo", ["x"])
    for args, param in [
        (("helper", "", {}), "task"),
        (("helper", "x", ["not", "a", "dict"]), "payload"),
        (("helper", "x", {"v": object()}), "payload"),
        ((None, "x", {}), "target_agent"),
    ]:
        with pytest.raises(RequestError) as caught:
            await registry.route(*args)
        assert caught.value.param == param
    assert agent.hits() == 0


async def test_delegate_routes_to_the_first_capable_agent_or_answers_none(local, agent):
    registry = await local()
    await registry.register("b-helper", f"{agent.url}/fail", ["send_message"])
    await registry.register("a-helper", f"{agent.url}/echo", ["send_message"])
    assert await registry.delegate("fly", {}) is None
    routed = await registry.delegate("send_message", {"to": "Priya"})
    assert routed is not None and routed["success"] and routed["agent"] == "a-helper"
    assert agent.hits("/fail") == 0
