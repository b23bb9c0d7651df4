"""The registry's REST surface and the pipeline's delegation, through a real nerve server
(SPEC PR-4): /api/agents, /api/agents/route, and /api/process running an intent on a registered
agent first and on the local handler when the agent fails."""

from __future__ import annotations

import httpx
import pytest

from nerve.agents import AgentRegistry
from tests.agents.fake_agent import free_port
from tests.conftest import make_config


@pytest.fixture
def server(serve, upstream):
    return serve(make_config({"primary": upstream}))


def call(server, method, path, body=None, **kw):
    return httpx.request(method, f"{server.url}{path}", json=body, timeout=10, **kw)


def register(server, name, endpoint, capabilities):
    body = {"agent_name": name, "endpoint": endpoint, "capabilities": capabilities}
    return call(server, "POST", "/api/agents", body)


def test_agents_are_registered_listed_found_and_deleted(server, agent):
    assert isinstance(server.app.agents, AgentRegistry)
    r = register(server, "helper", f"{agent.url}/echo", ["summarize"])
    assert r.status_code == 201, r.text
    assert r.json()["agent_name"] == "helper" and r.json()["capabilities"] == ["summarize"]
    r = register(server, "helper", f"{agent.url}/echo", ["summarize", "explain"])
    assert r.status_code == 200 and r.json()["capabilities"] == ["summarize", "explain"]
    register(server, "mailer", "http://localhost:9/", ["send_message"])
    listed = call(server, "GET", "/api/agents").json()["agents"]
    assert [a["agent_name"] for a in listed] == ["helper", "mailer"]
    found = call(server, "GET", "/api/agents", params={"capability": "send_message"}).json()
    assert [a["agent_name"] for a in found["agents"]] == ["mailer"]
    assert call(server, "GET", "/api/agents/helper").json()["endpoint"] == f"{agent.url}/echo"
    assert call(server, "DELETE", "/api/agents/mailer").json() == {"deleted": True}
    r = call(server, "DELETE", "/api/agents/mailer")
    assert r.status_code == 404 and "no agent named 'mailer'" in r.json()["error"]["message"]
    assert call(server, "GET", "/api/agents/mailer").status_code == 404


def test_route_returns_the_agents_answer_and_failures_as_data(server, agent):
    register(server, "helper", f"{agent.url}/echo", ["summarize"])
    body = {"target_agent": "helper", "task": "summarize", "payload": {"text": "long"}}
    r = call(server, "POST", "/api/agents/route", body)
    assert r.status_code == 200 and r.json()["success"] is True
    assert r.json()["result"]["echo"] == {"task": "summarize", "payload": {"text": "long"}}
    r = call(server, "POST", "/api/agents/route", {**body, "target_agent": "ghost"})
    assert r.status_code == 200
    assert r.json() == {"success": False, "fallback": True, "agent": "ghost",
                        "error": "no agent named 'ghost' is registered"}  # fmt: skip
    register(server, "gone", f"http://127.0.0.1:{free_port()}/", ["summarize"])
    r = call(server, "POST", "/api/agents/route", {**body, "target_agent": "gone"})
    assert r.status_code == 200 and r.json()["fallback"] is True
    assert "unreachable" in r.json()["error"]


@pytest.mark.parametrize(
    ("path", "body", "param"),
    [
        ("/api/agents", {}, "agent_name"),
        ("/api/agents", {"agent_name": "a b", "endpoint": "http://localhost/"}, "agent_name"),
        ("/api/agents", {"agent_name": "a", "endpoint": "ftp://localhost/"}, "endpoint"),
        ("/api/agents", {"agent_name": "a", "endpoint": "http://10.0.0.1/"}, "endpoint"),
        ("/api/agents", {"agent_name": "a", "endpoint": 5}, "endpoint"),
        (
            "/api/agents",
            {"agent_name": "a", "endpoint": "http://localhost/", "capabilities": "x"},
            "capabilities",
        ),
        ("/api/agents", {"agent_name": "a", "endpoint": "http://localhost/", "x": 1}, "x"),
        ("/api/agents/route", {"target_agent": "a", "payload": {}}, "task"),
        ("/api/agents/route", {"target_agent": "a", "task": "t", "payload": [1]}, "payload"),
        (
            "/api/agents/route",
            {"target_agent": "a", "task": "t", "idempotent": "maybe"},
            "idempotent",
        ),
        ("/api/agents/route", {"task": "t"}, "target_agent"),
    ],
)
def test_bad_bodies_are_400s_naming_the_field(server, path, body, param):
    r = call(server, "POST", path, body)
    assert r.status_code == 400, r.text
    assert r.json()["error"]["param"] == param
    assert param in r.json()["error"]["message"]


def test_a_private_endpoint_is_refused_with_the_setting_that_allows_it(server):
    r = register(server, "a", "http://10.0.0.1/", [])
    assert r.status_code == 400 and "agents.allowed_hosts" in r.json()["error"]["message"]


def test_process_runs_an_intent_on_the_agent_that_has_it(server, agent, upstream):
    register(server, "helper", f"{agent.url}/echo", ["explain"])
    r = call(server, "POST", "/api/process", {"text": "explain how DNS works", "user_id": "asha"})
    execution = r.json()["execution"]
    assert execution["status"] == "ok" and execution["executed_by"] == "agent:helper"
    sent = execution["result"]["echo"]
    assert sent["task"] == "explain"
    assert sent["payload"]["text"] == "explain how DNS works"
    assert sent["payload"]["user_id"] == "asha"
    assert sent["payload"]["intent"]["intent"] == "explain"
    assert sent["payload"]["language"]["languages"] == ["en"]
    assert upstream.requests == []  # the local handler (a model call) did not run


def test_process_falls_back_to_the_local_handler_when_the_agent_is_down(server, upstream):
    register(server, "helper", f"http://127.0.0.1:{free_port()}/", ["explain"])
    r = call(server, "POST", "/api/process", {"text": "explain how DNS works"})
    execution = r.json()["execution"]
    assert execution["status"] == "ok" and execution["executed_by"] == "local"
    assert execution["result"] == {"answer": "Hello from fake"}
    assert "agent 'helper' failed: unreachable" in execution["agent_error"]
    assert len(upstream.requests) == 1


def test_process_says_so_when_the_agent_fails_and_nothing_local_can_run(server):
    register(server, "mailer", f"http://127.0.0.1:{free_port()}/", ["send_message"])
    r = call(server, "POST", "/api/process", {"text": "send a message to Priya saying hi"})
    execution = r.json()["execution"]
    assert execution["status"] == "no_handler" and execution["executed"] is False
    assert execution["executed_by"] is None and "unreachable" in execution["agent_error"]


def test_a_request_safety_blocks_never_reaches_an_agent(server, agent):
    register(server, "cleaner", f"{agent.url}/echo", ["delete_data"])
    r = call(server, "POST", "/api/process", {"text": "delete all records from the users table"})
    assert r.json()["execution"]["status"] == "blocked"
    assert agent.hits() == 0


def test_without_a_capable_agent_process_is_unchanged(server):
    r = call(server, "POST", "/api/process", {"text": "convert this csv file to json"})
    assert r.json()["execution"] == {
        "status": "no_handler",
        "executed": False,
        "message": "no handler is registered for intent 'convert_format'",
    }
