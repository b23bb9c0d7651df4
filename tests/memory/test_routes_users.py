"""Whose memory a key may touch (server.api_keys `users`, issue: one boundary): over REST, a key
limited to some users reads and writes theirs and is refused, 403 naming the user, for anyone
else on every per-user route; a key without the limit, and a server without keys, act for any."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from nerve.config import Config
from nerve.server import build_app
from tests.conftest import RunningServer, make_config
from tests.fakes.upstream import FakeUpstream

BOT, FULL = "sk-bot-only-ci-bot", "sk-full-access"
KEYS = [{"name": "bot", "key": BOT, "users": ["ci-bot"]}, FULL]
Serve = Callable[[Config], RunningServer]
Api = Callable[..., httpx.Response]


def per_user_routes(user: str) -> list[tuple[str, str, dict[str, Any] | None]]:
    """Every memory route that acts for one named user, as (method, path, body)."""
    return [
        ("POST", "/store", {"user_id": user, "tier": "semantic", "intent": "preference",
                            "data": {"text": "prefers short answers"}, "importance": 0.8}),
        ("POST", "/recall", {"user_id": user}),
        ("POST", "/events", {"user_id": user, "session_id": "s1", "type": "outcome_task",
                             "payload": {"task": "fix the build"}}),
        ("POST", "/facts", {"user_id": user, "entity": user, "attribute": "city",
                            "value": "Chennai", "importance": 0.8}),
        ("POST", "/context", {"user_id": user}),
        ("DELETE", f"/users/{user}", None),
    ]  # fmt: skip


@pytest.fixture
def api(serve: Serve, upstream: FakeUpstream) -> Api:
    server = serve(make_config({"primary": upstream}, server={"api_keys": KEYS}))

    def call(key: str, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        return httpx.request(
            method, f"{server.url}/api/memory{path}", json=body, timeout=10,
            headers={"authorization": f"Bearer {key}"},
        )  # fmt: skip

    return call


def test_a_key_limited_to_a_user_acts_for_that_user_on_every_route(api: Api) -> None:
    for method, path, body in per_user_routes("ci-bot"):
        answer = api(BOT, method, path, body)
        assert answer.status_code == 200, (path, answer.text)


def test_a_key_limited_to_a_user_is_refused_for_another_on_every_route_naming_them(
    api: Api,
) -> None:
    for method, path, body in per_user_routes("asha"):
        answer = api(BOT, method, path, body)
        assert answer.status_code == 403, (path, answer.text)
        error = answer.json()["error"]
        assert error["code"] == "user_not_allowed"
        assert "'asha'" in error["message"] and "'bot'" in error["message"]


def test_a_key_without_a_users_limit_acts_for_anyone_on_every_route(api: Api) -> None:
    for method, path, body in per_user_routes("asha"):
        answer = api(FULL, method, path, body)
        assert answer.status_code == 200, (path, answer.text)


def test_what_a_refused_write_would_have_stored_is_not_there(api: Api) -> None:
    _, _, store = per_user_routes("asha")[0]
    assert api(BOT, "POST", "/store", store).status_code == 403
    assert api(FULL, "POST", "/recall", {"user_id": "asha"}).json()["records"] == []


def test_forgetting_one_memory_by_id_a_limited_key_sees_only_its_users(api: Api) -> None:
    """DELETE /{id} names no user: another user's memory is a 404 for a limited key, as if it
    did not exist (it learns neither the record nor whose it is), and stays."""
    _, _, theirs = per_user_routes("asha")[0]
    _, _, ours = per_user_routes("ci-bot")[0]
    their_id = api(FULL, "POST", "/store", theirs).json()["id"]
    our_id = api(BOT, "POST", "/store", ours).json()["id"]

    refused, unknown = api(BOT, "DELETE", f"/{their_id}"), api(BOT, "DELETE", "/no-such-id")
    assert refused.status_code == unknown.status_code == 404
    assert refused.json()["error"]["message"] == f"no memory with id {their_id!r}"
    kept = api(FULL, "POST", "/recall", {"user_id": "asha"}).json()["records"]
    assert [r["id"] for r in kept] == [their_id]
    assert api(BOT, "DELETE", f"/{our_id}").json() == {"deleted": 1}
    assert api(FULL, "DELETE", f"/{their_id}").json() == {"deleted": 1}


def test_without_keys_every_route_acts_for_any_user_as_before(
    serve: Serve, upstream: FakeUpstream
) -> None:
    server = serve(make_config({"primary": upstream}))
    for method, path, body in per_user_routes("asha"):
        answer = httpx.request(method, f"{server.url}/api/memory{path}", json=body, timeout=10)
        assert answer.status_code == 200, (path, answer.text)


def test_every_memory_route_is_one_of_those_checked_here(upstream: FakeUpstream) -> None:
    """A new route must join `per_user_routes` (or say here why it names no user)."""
    paths = build_app(make_config({"primary": upstream})).api.openapi()["paths"]
    served = {(method.upper(), path) for path, item in paths.items()
              if path.startswith("/api/memory") for method in item}  # fmt: skip
    checked = {(m, f"/api/memory{p}") for m, p, _ in per_user_routes("{user_id}")}
    assert served == checked | {("DELETE", "/api/memory/{record_id}")}  # by id: see above
