"""Memory over REST (SPEC PR-2): /api/memory/{store,recall,events,facts,context} and deletes."""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import make_config


@pytest.fixture
def api(serve, upstream):
    server = serve(make_config({"primary": upstream}))

    def call(method, path, body=None):
        return httpx.request(method, f"{server.url}/api/memory{path}", json=body, timeout=10)

    return call


def test_store_then_recall_round_trips(api):
    r = api(
        "POST",
        "/store",
        {
            "user_id": "asha",
            "tier": "semantic",
            "intent": "preference",
            "data": {"text": "prefers Tamil replies"},
            "importance": 0.8,
        },
    )
    assert r.status_code == 200 and r.json()["stored"] is True
    record_id = r.json()["id"]
    r = api("POST", "/recall", {"user_id": "asha", "query": "tamil"})
    records = r.json()["records"]
    assert records[0]["id"] == record_id and records[0]["score"] > 0
    assert records[0]["data"] == {"text": "prefers Tamil replies"}


def test_a_low_importance_memory_is_refused_with_a_reason(api):
    r = api(
        "POST",
        "/store",
        {"user_id": "u", "tier": "episodic", "intent": "x", "data": {}, "importance": 0.1},
    )
    assert r.status_code == 200
    assert r.json()["stored"] is False and "threshold" in r.json()["reason"]


def test_events_facts_and_context(api):
    assert (
        api(
            "POST",
            "/events",
            {
                "user_id": "d",
                "session_id": "s1",
                "type": "outcome_task",
                "payload": {"task": "add pagination"},
            },
        ).status_code
        == 200
    )
    assert (
        api(
            "POST",
            "/facts",
            {
                "user_id": "d",
                "entity": "api",
                "attribute": "framework",
                "value": "FastAPI",
                "importance": 0.9,
                "session_id": "s1",
            },
        ).status_code
        == 200
    )
    r = api("POST", "/context", {"user_id": "d", "session_id": "s2", "query": "pagination"})
    assert r.status_code == 200
    body = r.json()
    assert body["items"][0]["source"] == "active_task"
    assert "add pagination" in body["prompt_block"] and "FastAPI" in body["prompt_block"]


def test_forget_one_and_forget_a_user(api):
    rid = api(
        "POST",
        "/store",
        {"user_id": "z", "tier": "semantic", "intent": "n", "data": {"t": "a"}, "importance": 0.9},
    ).json()["id"]
    assert api("DELETE", f"/{rid}").json() == {"deleted": 1}
    assert api("DELETE", f"/{rid}").status_code == 404
    api(
        "POST",
        "/store",
        {"user_id": "z", "tier": "semantic", "intent": "n", "data": {"t": "b"}, "importance": 0.9},
    )
    assert api("DELETE", "/users/z").json()["deleted"] == 1
    assert api("POST", "/recall", {"user_id": "z"}).json()["records"] == []


@pytest.mark.parametrize(
    ("path", "body", "param"),
    [
        (
            "/store",
            {"user_id": "u", "tier": "semantic", "intent": "n", "data": {}, "importance": 1.2},
            "importance",
        ),
        ("/store", {"tier": "semantic", "intent": "n", "data": {}, "importance": 0.5}, "user_id"),
        (
            "/store",
            {"user_id": "u", "tier": "eternal", "intent": "n", "data": {}, "importance": 0.5},
            "tier",
        ),
        (
            "/store",
            {
                "user_id": "u",
                "tier": "semantic",
                "intent": "n",
                "data": {"x": "y" * 70_000},
                "importance": 0.5,
            },
            "data",
        ),
        ("/recall", {"user_id": "u", "limit": 0}, "limit"),
        ("/recall", {"user_id": "u", "limit": 10_001}, "limit"),
        (
            "/events",
            {"user_id": "u", "session_id": "s", "type": "ear_listen", "payload": {}},
            "type",
        ),
        (
            "/events",
            {"user_id": "u", "session_id": "s", "type": "outcome_done", "payload": {"score": 3}},
            "payload.score",
        ),
    ],
)
def test_bad_bodies_are_400s_naming_the_field_and_nothing_is_written(api, path, body, param):
    r = api("POST", path, body)
    assert r.status_code == 400, r.text
    assert r.json()["error"]["param"] == param
    assert api("POST", "/recall", {"user_id": "u"}).json()["records"] == []


def test_process_remembers_what_it_understood(serve, upstream):
    """PR-1: the optional memory step of the pipeline."""
    server = serve(make_config({"primary": upstream}, pipeline={"answer_model": None}))
    httpx.post(
        f"{server.url}/api/process",
        json={"text": "convert the sales csv to json", "user_id": "ravi"},
    )
    r = httpx.post(f"{server.url}/api/memory/recall", json={"user_id": "ravi", "query": "sales"})
    record = r.json()["records"][0]
    assert record["intent"] == "convert_format" and record["data"]["allowed"] is True
