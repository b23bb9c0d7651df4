"""Fan-out (SPEC GW-11): POST /parallel, /task and /analysis through the gateway."""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import make_config
from tests.fakes.upstream import Reply

MSG = [{"role": "user", "content": "should we shard the users table?"}]
ROUTES = [
    {"name": "code", "rules": ["python"], "model": {"provider": "primary", "model": "coder"}},
    {"name": "default", "model": {"provider": "primary", "model": "m1"}},
]


@pytest.fixture
def server(serve, upstream, upstream2):
    return serve(make_config({"primary": upstream, "secondary": upstream2}, routes=ROUTES))


def post(server, path, body, **kw):
    return httpx.post(f"{server.url}{path}", json=body, timeout=10, **kw)


def test_parallel_asks_every_model_and_reports_each_failure_in_its_slot(
    server, upstream, upstream2
):
    upstream.script(Reply(text="from m1"), model="m1")
    upstream.script(Reply(status=503), model="m2")
    upstream2.script(Reply(text="from m3"), model="m3")
    r = post(
        server,
        "/parallel",
        {
            "messages": MSG,
            "temperature": 0.2,
            "models": ["primary/m1", "primary/m2", "secondary/m3"],
        },
    )
    assert r.status_code == 200
    body = r.json()
    assert [x["model"] for x in body["results"]] == ["primary/m1", "primary/m2", "secondary/m3"]
    ok, failed, third = body["results"]
    assert ok["ok"] and ok["content"] == "from m1" and ok["latency_ms"] > 0 and ok["usage"]
    assert not failed["ok"] and failed["status"] == 502 and "503" in failed["error"]
    assert third["content"] == "from m3"
    assert (body["succeeded"], body["failed"]) == (2, 1)
    assert all(req.body["temperature"] == 0.2 for req in upstream.requests)


def test_task_dispatches_to_one_route(server, upstream):
    r = post(server, "/task", {"route": "code", "messages": MSG})
    assert r.status_code == 200
    assert r.json()["route"] == "code" and r.json()["served_by"] == "coder"
    assert upstream.requests[-1].body["model"] == "coder"
    r = post(server, "/task", {"route": "nope", "messages": MSG})
    assert r.status_code == 404 and r.json()["error"]["code"] == "model_not_found"


def test_analysis_gathers_perspectives_then_synthesises(server, upstream):
    upstream.script(
        Reply(text="keep it simple"),
        Reply(status=500),
        Reply(text="users first"),
        Reply(text="do it later"),
    )
    r = post(server, "/analysis", {"messages": MSG})
    assert r.status_code == 200
    body = r.json()
    assert len(body["perspectives"]) == 3
    assert sum(p["ok"] for p in body["perspectives"]) == 2
    assert body["synthesis"]["content"] == "do it later"
    brief = upstream.requests[-1].body["messages"][-1]["content"]
    assert "keep it simple" in brief and "users first" in brief


def test_analysis_whose_every_perspective_failed_says_what_failed_not_500(server, upstream):
    upstream.script(*[Reply(status=400)] * 3)  # the request itself is wrong, for every model
    r = post(server, "/analysis", {"messages": MSG})
    assert r.status_code == 400 and r.json()["error"]["code"] == "analysis_failed"
    assert r.json()["error"]["type"] == "invalid_request_error"


@pytest.mark.parametrize(
    ("path", "body", "param"),
    [
        ("/parallel", {"messages": MSG, "models": []}, "models"),
        ("/parallel", {"models": ["auto"]}, "messages"),
        (
            "/parallel",
            {"models": ["auto"], "messages": [{"role": "x", "content": "y"}]},
            "messages[0].role",
        ),
        ("/analysis", {"messages": MSG, "personas": []}, "personas"),
    ],
)
def test_bad_fan_out_bodies_are_400s_naming_the_field(server, path, body, param):
    r = post(server, path, body)
    assert r.status_code == 400 and r.json()["error"]["param"] == param


def test_fan_out_needs_a_key_when_the_server_has_api_keys(serve, upstream):
    server = serve(make_config({"primary": upstream}, server={"api_keys": ["k1"]}))
    assert post(server, "/task", {"route": "default", "messages": MSG}).status_code == 401
    r = post(
        server,
        "/task",
        {"route": "default", "messages": MSG},
        headers={"authorization": "Bearer k1"},
    )
    assert r.status_code == 200
