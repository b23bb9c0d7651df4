"""`/api/process` remembers each request for a user, so a key limited to some users
(server.api_keys `users`) may only name those; one that names none acts for the key's first."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from nerve.config import Config
from tests.conftest import RunningServer, make_config
from tests.fakes.upstream import FakeUpstream

BOT, FULL = "sk-bot-only-ci-bot", "sk-full-access"
Serve = Callable[[Config], RunningServer]
Post = Callable[[str, str, dict[str, Any]], httpx.Response]


@pytest.fixture
def post(serve: Serve, upstream: FakeUpstream) -> Post:
    keys = [{"name": "bot", "key": BOT, "users": ["ci-bot"]}, FULL]
    server = serve(make_config({"primary": upstream}, server={"api_keys": keys}))

    def call(key: str, path: str, body: dict[str, Any]) -> httpx.Response:
        headers = {"authorization": f"Bearer {key}"}
        return httpx.post(f"{server.url}{path}", json=body, headers=headers, timeout=10)

    return call


def remembered(post: Post, user_id: str) -> list[str]:
    records = post(FULL, "/api/memory/recall", {"user_id": user_id}).json()["records"]
    return [r["data"]["text"] for r in records]


def test_a_limited_key_processes_for_its_user_and_is_refused_for_another(post: Post) -> None:
    ok = post(BOT, "/api/process", {"text": "list the files", "user_id": "ci-bot"})
    refused = post(BOT, "/api/process", {"text": "list my files", "user_id": "asha"})
    assert ok.status_code == 200, ok.text
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "user_not_allowed"
    assert "'asha'" in refused.json()["error"]["message"]
    assert remembered(post, "ci-bot") == ["list the files"]
    assert remembered(post, "asha") == []


def test_a_request_that_names_no_user_is_the_keys_first_user(post: Post) -> None:
    assert post(BOT, "/api/process", {"text": "show the logs"}).status_code == 200
    assert post(FULL, "/api/process", {"text": "show the weather"}).status_code == 200
    assert remembered(post, "ci-bot") == ["show the logs"]
    assert remembered(post, "anonymous") == ["show the weather"]  # no users limit: as before


def test_a_key_without_a_users_limit_processes_for_anyone(post: Post) -> None:
    assert post(FULL, "/api/process", {"text": "hello", "user_id": "asha"}).status_code == 200
    assert remembered(post, "asha") == ["hello"]
