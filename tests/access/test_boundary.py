"""The one security boundary: every route not on the public list refuses a request without a
valid key when keys are configured — proven by walking the application's route table, so a
route added later cannot be forgotten."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
from starlette.routing import BaseRoute, Mount, Route, WebSocketRoute
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from nerve.access import is_public
from nerve.mcp import MCP_PATHS
from nerve.server import MODEL_PATHS
from tests.conftest import RunningServer, make_config

KEY = "full-access-key-0123"
BODY = b'{"model": "auto", "messages": [{"role": "user", "content": "hi"}]}'


def walk(routes: list[BaseRoute], prefix: str = "") -> Iterator[tuple[str, str, str]]:
    """(kind, path, method) of every route, mounted apps' included; path params filled in."""
    for route in routes:
        included = getattr(route, "original_router", None)  # FastAPI's include_router
        if included is not None:
            yield from walk(included.routes, prefix + route.include_context.prefix)  # type: ignore[attr-defined]
        elif isinstance(route, Mount):
            inner = getattr(route.app, "routes", None)
            path = prefix + route.path
            if inner:
                yield from walk(inner, path)
            else:
                yield "http", path + "/x", "GET"
        elif isinstance(route, WebSocketRoute):
            yield "websocket", prefix + fill(route.path), "GET"
        elif isinstance(route, Route):
            for method in sorted(route.methods or {"GET"}):
                if method != "HEAD":
                    yield "http", prefix + fill(route.path), method


def fill(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "x", path)


@pytest.fixture
def keyed(serve, upstream) -> RunningServer:
    server: RunningServer = serve(
        make_config(
            {"primary": upstream}, server={"api_keys": [KEY]}, probes={"interval_seconds": 0}
        )
    )
    return server


def every_route(server: RunningServer) -> list[tuple[str, str, str]]:
    found = list(walk(server.app.api.routes))
    found += [("http", p, "POST") for p in sorted(MODEL_PATHS | MCP_PATHS)]
    return sorted(set(found))


def test_every_non_public_route_refuses_a_request_without_a_valid_key(keyed, upstream):
    routes = every_route(keyed)
    protected = [r for r in routes if not is_public(r[1])]
    assert len(protected) > 30, protected  # the whole API is walked, not a handful of paths
    bodies = set()
    with httpx.Client(base_url=keyed.url, timeout=10) as client:
        for kind, path, method in protected:
            if kind == "websocket":
                for headers in ({}, {"authorization": "Bearer wrong-key-0000"}):
                    with pytest.raises(InvalidStatus) as refused:
                        connect(f"ws://127.0.0.1:{keyed.port}{path}", additional_headers=headers)
                    assert refused.value.response.status_code == 403, path
                continue
            json = {"content-type": "application/json"}
            for headers in (json, {**json, "authorization": "Bearer wrong-key-0000"}):
                r = client.request(method, path, headers=headers, content=BODY)
                assert r.status_code == 401, (method, path, r.status_code, r.text)
                bodies.add(r.json()["error"]["code"])
    assert bodies == {"invalid_api_key"}
    assert upstream.requests == [], "a refused request must not reach a model"


def test_a_wrong_key_and_a_missing_key_are_refused_alike_and_the_key_admits(keyed):
    with httpx.Client(base_url=keyed.url, timeout=10) as client:
        wrong = client.get("/stats", headers={"authorization": "Bearer not-a-key-at-all"})
        assert wrong.status_code == 401
        assert wrong.json()["error"]["message"] == "invalid API key"
        assert "not-a-key" not in wrong.text
        ok = client.get("/stats", headers={"authorization": f"Bearer {KEY}"})
        assert ok.status_code == 200
        assert KEY not in ok.text


def test_public_paths_answer_without_a_key(keyed):
    with httpx.Client(base_url=keyed.url, timeout=10) as client:
        assert client.get("/health").status_code == 200
        assert client.get("/chat").status_code == 200
        assert client.get("/openapi.json").status_code == 200
        assert client.get("/admin").status_code == 200


def test_without_keys_loopback_clients_need_none(serve, upstream):
    server = serve(make_config({"primary": upstream}, probes={"interval_seconds": 0}))
    with httpx.Client(base_url=server.url, timeout=10) as client:
        assert client.get("/stats").status_code == 200
        assert client.post(
            "/api/memory/recall", json={"user_id": "u", "query": "x"}
        ).status_code in (
            200,
            404,
        )
        evil = client.get("/stats", headers={"host": "evil.example"})
        assert evil.status_code == 421


def test_the_admin_api_past_its_login_needs_an_admin_session(keyed):
    """/admin is public to the boundary because it has its own login; every API route behind
    that login refuses a request without a session, with or without an API key."""
    admin = [
        r
        for r in every_route(keyed)
        if r[1].startswith("/admin/api/") and r[1] != "/admin/api/login"
    ]
    assert len(admin) > 5, admin
    with httpx.Client(base_url=keyed.url, timeout=10) as client:
        for _, path, method in admin:
            for headers in ({}, {"authorization": f"Bearer {KEY}"}):
                r = client.request(method, path, headers=headers)
                assert r.status_code == 401, (method, path, r.status_code, r.text)
