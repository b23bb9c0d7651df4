"""The REST surface of the pipeline: /api/process, /api/safety/check, /api/language/detect."""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import make_config


@pytest.fixture
def server(serve, upstream):
    return serve(make_config({"primary": upstream}))


def post(server, path, body=None, **kw):
    return httpx.post(f"{server.url}{path}", json=body, timeout=10, **kw)


def test_process_returns_language_intent_safety_and_execution(server):
    r = post(server, "/api/process", {"text": "file ko json mein convert karo", "user_id": "u"})
    assert r.status_code == 200
    body = r.json()
    assert set(body) == {"language", "intent", "safety", "execution"}
    assert body["intent"]["intent"] == "convert_format"
    assert body["safety"]["allowed"] is True


def test_process_blocks_a_destructive_request(server):
    r = post(server, "/api/process", {"text": "run rm -rf / on the server"})
    body = r.json()
    assert r.status_code == 200 and body["safety"]["allowed"] is False
    assert body["execution"]["status"] == "blocked"


def test_safety_check_returns_a_verdict(server):
    r = post(server, "/api/safety/check", {"kind": "sql", "content": "DROP TABLE users"})
    assert r.status_code == 200
    assert r.json() == {**r.json(), "allowed": False, "blocked_by": "rule"}
    r = post(server, "/api/safety/check", {"kind": "shell", "content": "ls -la"})
    assert r.json()["allowed"] is True


def test_safety_check_judges_paths_against_the_workspace_it_is_given(server):
    """SF-1: inside the workspace is the user's business; outside it is refused."""
    scope = {"kind": "shell", "cwd": "/home/dev/proj"}
    inside = post(server, "/api/safety/check", {**scope, "content": "rm -rf build dist"})
    assert inside.status_code == 200 and inside.json()["allowed"] is True
    outside = post(server, "/api/safety/check", {**scope, "content": "rm -rf ../other-proj"})
    assert outside.json()["allowed"] is False
    assert outside.json()["category"] == "workspace"
    rooted = {**scope, "roots": ["/home/dev/proj", "/srv/cache"], "content": "rm -rf /srv/cache/x"}
    assert post(server, "/api/safety/check", rooted).json()["allowed"] is True


def test_safety_check_in_read_only_mode_lets_only_reads_through(server):
    """SF-1: mode read_only refuses any SQL write, even one the default mode allows."""
    write = {"kind": "sql", "content": "UPDATE users SET name = 'x' WHERE id = 1"}
    assert post(server, "/api/safety/check", write).json()["allowed"] is True
    refused = post(server, "/api/safety/check", {**write, "mode": "read_only"}).json()
    assert refused["allowed"] is False and refused["category"] == "read_only"
    read = {"kind": "sql", "content": "SELECT name FROM users WHERE id = 1", "mode": "read_only"}
    assert post(server, "/api/safety/check", read).json()["allowed"] is True


def test_safety_check_reads_sql_comments_as_the_dialect_does(server):
    """SF-1: `--1` starts a comment in PostgreSQL but not in MySQL; `any` reads it strictest."""
    body = {"kind": "sql", "content": "SELECT 1 --1;DROP TABLE users"}
    assert post(server, "/api/safety/check", {**body, "dialect": "postgres"}).json()["allowed"]
    assert not post(server, "/api/safety/check", {**body, "dialect": "mysql"}).json()["allowed"]
    assert not post(server, "/api/safety/check", body).json()["allowed"]


def test_language_detect_returns_the_five_lg2_keys(server):
    r = post(server, "/api/language/detect", {"text": "nenu office ki veltunnanu"})
    assert r.status_code == 200
    assert set(r.json()) == {
        "languages",
        "confidence",
        "is_code_switched",
        "original_text",
        "normalized_text",
    }
    assert r.json()["languages"][0] == "te"


@pytest.mark.parametrize(
    ("path", "body", "param"),
    [
        ("/api/process", {}, "text"),
        ("/api/process", {"text": 5}, "text"),
        ("/api/process", {"text": "hi", "user_id": ""}, "user_id"),
        ("/api/process", {"text": "hi", "user_id": "   "}, "user_id"),
        ("/api/process", {"text": "hi", "user_id": "u\u0000"}, "user_id"),
        ("/api/process", {"text": "hi\u0000"}, "text"),
        ("/api/process", {"text": "hi", "execute": 0}, "execute"),
        ("/api/process", {"text": "hi", "surprise": 1}, "surprise"),
        ("/api/safety/check", {"kind": "python", "content": "x"}, "kind"),
        ("/api/safety/check", {"kind": "sql"}, "content"),
        ("/api/safety/check", {"kind": "shell", "content": "ls", "cwd": "proj"}, "cwd"),
        ("/api/safety/check", {"kind": "shell", "content": "ls", "roots": ["a/b"]}, "roots"),
        ("/api/safety/check", {"kind": "shell", "content": "ls", "roots": "/a"}, "roots"),
        ("/api/safety/check", {"kind": "sql", "content": "x", "mode": "readonly"}, "mode"),
        ("/api/safety/check", {"kind": "sql", "content": "x", "dialect": "db2"}, "dialect"),
        ("/api/language/detect", {"text": ["a"]}, "text"),
        ("/api/language/detect", {"text": "x" * 100_001}, "text"),
    ],
)
def test_bad_bodies_are_400s_naming_the_field(server, path, body, param):
    r = post(server, path, body)
    assert r.status_code == 400, r.text
    assert r.json()["error"]["param"] == param
    assert param in r.json()["error"]["message"]


def test_a_blank_user_id_is_refused_before_anything_runs_or_is_remembered(server, caplog):
    """Issue 13: it used to answer 200 while the memory step failed in the log."""
    r = post(server, "/api/process", {"text": "remember that I like tea", "user_id": " \t "})
    assert r.status_code == 400 and r.json()["error"]["param"] == "user_id"
    assert "blank" in r.json()["error"]["message"]
    assert "memory hook failed" not in caplog.text
    recalled = post(server, "/api/memory/recall", {"user_id": "anonymous"}).json()
    assert recalled["records"] == []


@pytest.mark.parametrize("raw", [b"{not json", b"\xff\xfe\x00garbage", b'["a list"]', b""])
def test_unparseable_bodies_are_400s(server, raw):
    for path in ("/api/process", "/api/safety/check", "/api/language/detect"):
        r = httpx.post(
            f"{server.url}{path}", content=raw, headers={"content-type": "application/json"}
        )
        assert r.status_code == 400, (path, raw, r.text)
        assert r.json()["error"]["type"] == "invalid_request_error"


def test_a_body_over_the_limit_is_413_on_api_routes(serve, upstream):
    server = serve(make_config({"primary": upstream}, limits={"max_body_bytes": 2048}))
    r = post(server, "/api/language/detect", {"text": "x" * 5000})
    assert r.status_code == 413


def test_openapi_documents_the_api(server):
    spec = httpx.get(f"{server.url}/openapi.json").json()
    assert {"/api/process", "/api/safety/check", "/api/language/detect"} <= set(spec["paths"])
    assert httpx.get(f"{server.url}/docs").status_code == 200
