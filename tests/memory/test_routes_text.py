"""Memory over REST refuses what no store can keep (issue 13): a NUL or another control
character anywhere in a memory's strings (tab, newline and carriage return excepted), nested in
`data` too, and a blank user id, are a 400 naming the field, never a 500 from the store. The
server runs on SQLite and on PostgreSQL (whose text cannot hold NUL at all)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from nerve.config import Config
from tests.conftest import RunningServer, make_config
from tests.fakes.upstream import FakeUpstream
from tests.memory.conftest import backend, postgres_schema, storage_url  # noqa: F401 - fixtures

Api = Callable[..., httpx.Response]
STORE = {"user_id": "u", "tier": "episodic", "intent": "i", "importance": 0.9}


@pytest.fixture
def api(
    serve: Callable[[Config], RunningServer],
    upstream: FakeUpstream,
    storage_url: str,  # noqa: F811 - the fixture
) -> Api:
    server = serve(make_config({"primary": upstream}, storage={"url": storage_url}))

    def call(method: str, path: str, body: Any = None, *, raw: bytes | None = None) -> Any:
        return httpx.request(
            method, f"{server.url}/api/memory{path}", json=body, content=raw, timeout=10,
            headers={"content-type": "application/json"},
        )  # fmt: skip

    return call


@pytest.mark.parametrize(
    ("path", "body", "param", "where"),
    [
        ("/store", {**STORE, "data": {"k": "\u0000"}}, "data", "data.k"),
        ("/store", {**STORE, "data": {"list": [{"deep": "a\u001bb"}]}}, "data", "data.list.0.deep"),
        ("/store", {**STORE, "data": {"k\u0000": 1}}, "data", "a key of data"),
        ("/store", {**STORE, "data": {}, "intent": "i\u0000"}, "intent", "U+0000"),
        ("/store", {**STORE, "data": {}, "session_id": "\u0000"}, "session_id", "U+0000"),
        ("/facts", {"user_id": "u", "entity": "e\u0000", "attribute": "a", "value": "v",
                    "importance": 0.9}, "entity", "U+0000"),
        ("/facts", {"user_id": "u", "entity": "e", "attribute": "a", "value": "v\u0000",
                    "importance": 0.9}, "value", "U+0000"),
        ("/events", {"user_id": "u", "session_id": "s", "type": "outcome_task",
                     "payload": {"task": "t\u0000"}}, "payload", "payload.task"),
        ("/recall", {"user_id": "u\u0000"}, "user_id", "U+0000"),
        ("/recall", {"user_id": "u", "session_id": "\u0000"}, "session_id", "U+0000"),
        ("/context", {"user_id": "u", "query": "\u0000"}, "query", "U+0000"),
    ],
)  # fmt: skip
def test_a_control_character_is_a_400_naming_the_field_on_every_backend(
    api: Api, path: str, body: dict[str, Any], param: str, where: str
) -> None:
    answer = api("POST", path, body)
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["param"] == param and where in error["message"]
    assert "control characters" in error["message"]
    assert api("POST", "/recall", {"user_id": "u"}).json()["records"] == []


def test_a_lone_surrogate_escape_is_a_400_naming_the_field(api: Api) -> None:
    raw = b'{"user_id": "u", "tier": "episodic", "intent": "i", "importance": 0.9, "data": {"k": "\\ud800"}}'  # noqa: E501
    answer = api("POST", "/store", raw=raw)
    assert answer.status_code == 400 and answer.json()["error"]["param"] == "data"


@pytest.mark.parametrize("user_id", ["", "   ", "\t\n", "\u3000"])
def test_a_blank_user_id_is_a_400_naming_it_on_every_route(api: Api, user_id: str) -> None:
    for path, body in [
        ("/store", {**STORE, "data": {}, "user_id": user_id}),
        ("/recall", {"user_id": user_id}),
        ("/context", {"user_id": user_id}),
        ("/facts", {"user_id": user_id, "entity": "e", "attribute": "a", "value": 1,
                    "importance": 0.9}),
    ]:  # fmt: skip
        answer = api("POST", path, body)
        assert answer.status_code == 400, (path, answer.text)
        assert answer.json()["error"]["param"] == "user_id"


@pytest.mark.parametrize(
    ("path", "param"),
    [
        ("/users/%00", "path.user_id"),
        ("/users/%20%20", "path.user_id"),
        ("/a%00", "path.record_id"),
    ],
)
def test_a_path_with_a_control_character_or_blank_is_a_400_naming_it(
    api: Api, path: str, param: str
) -> None:
    answer = api("DELETE", path)
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["param"] == param


def test_tabs_and_newlines_round_trip_on_every_backend(api: Api) -> None:
    data = {"text": "first line\n\tsecond line\r\n"}
    stored = api("POST", "/store", {**STORE, "data": data})
    assert stored.status_code == 200 and stored.json()["stored"] is True
    [record] = api("POST", "/recall", {"user_id": "u"}).json()["records"]
    assert record["data"] == data
