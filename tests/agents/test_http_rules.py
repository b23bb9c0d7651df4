"""The registry's rules over REST (issue 13), on SQLite and PostgreSQL: what the OpenAPI document
states (patterns on names, endpoints, capabilities) is what the server accepts, and input no
agent could have (a NUL, an unencodable host name) is a 400 naming the field, never a 500."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from nerve.config import Config
from tests.conftest import RunningServer, make_config
from tests.fakes.upstream import FakeUpstream
from tests.memory.conftest import backend, postgres_schema, storage_url  # noqa: F401 - fixtures

Call = Callable[..., httpx.Response]
LOOPBACK = "http://127.0.0.1:9/tasks"


@pytest.fixture
def server(
    serve: Callable[[Config], RunningServer],
    upstream: FakeUpstream,
    storage_url: str,  # noqa: F811 - the fixture
) -> RunningServer:
    return serve(make_config({"primary": upstream}, storage={"url": storage_url}))


@pytest.fixture
def call(server: RunningServer) -> Call:
    def request(method: str, path: str, body: Any = None) -> httpx.Response:
        return httpx.request(method, f"{server.url}{path}", json=body, timeout=10)

    return request


def registered(call: Call, name: str, endpoint: str, capabilities: list[str]) -> bool:
    body = {"agent_name": name, "endpoint": endpoint, "capabilities": capabilities}
    answer = call("POST", "/api/agents", body)
    assert answer.status_code in (200, 201, 400), answer.text
    return answer.status_code != 400


@pytest.mark.parametrize(
    ("field", "value", "valid"),
    [
        ("agent_name", "0", True),
        ("agent_name", "helper.v2:eu-1", True),
        ("agent_name", "a b", False),
        ("agent_name", "-lead", False),
        ("agent_name", "a\u0000", False),
        ("endpoint", LOOPBACK, True),
        ("endpoint", "HTTP://[::1]:9/x?y#z", True),
        ("endpoint", "0", False),
        ("endpoint", "ftp://127.0.0.1/", False),
        ("endpoint", "http://127.0.0.1/a b", False),
        ("endpoint", "http://127.0.0.1/\u0000", False),
        ("capabilities", ["summarize"], True),
        ("capabilities", [" summarize"], False),
        ("capabilities", ["sum\u0000marize"], False),
    ],
)
def test_the_document_states_the_rules_the_server_applies(
    call: Call, field: str, value: Any, valid: bool
) -> None:
    spec = call("GET", "/openapi.json").json()["components"]["schemas"]["RegisterBody"]
    schema = spec["properties"][field]
    pattern = schema["items"]["pattern"] if field == "capabilities" else schema["pattern"]
    values = value if isinstance(value, list) else [value]
    assert all(re.fullmatch(pattern, v) for v in values) is valid
    body = {"agent_name": "helper", "endpoint": LOOPBACK, "capabilities": [], field: value}
    assert registered(call, body["agent_name"], body["endpoint"], body["capabilities"]) is valid


def test_a_host_name_no_resolver_can_encode_is_a_400(call: Call) -> None:
    for endpoint in ("http://a..b/", f"http://{'a' * 64}.example/"):
        answer = call("POST", "/api/agents", {"agent_name": "a", "endpoint": endpoint})
        assert answer.status_code == 400, answer.text
        assert answer.json()["error"]["param"] == "endpoint"


@pytest.mark.parametrize(
    ("method", "path", "body", "param"),
    [
        ("POST", "/api/agents/route", {"target_agent": "a\u0000", "task": "t"}, "target_agent"),
        ("POST", "/api/agents/route", {"target_agent": "a", "task": "t\u0000"}, "task"),
        ("POST", "/api/agents/route", {"target_agent": "a", "task": "   "}, "task"),
        ("GET", "/api/agents/a%00", None, "path.agent_name"),
        ("DELETE", "/api/agents/a%00", None, "path.agent_name"),
    ],
)
def test_a_name_no_agent_can_have_is_a_400_naming_it(
    call: Call, method: str, path: str, body: Any, param: str
) -> None:
    answer = call(method, path, body)
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["param"] == param


def test_the_document_says_what_register_and_lookups_answer(call: Call) -> None:
    paths = call("GET", "/openapi.json").json()["paths"]
    assert {"200", "201", "400"} <= set(paths["/api/agents"]["post"]["responses"])
    assert {"400", "404"} <= set(paths["/api/agents/{agent_name}"]["get"]["responses"])
    assert {"400", "404"} <= set(paths["/api/agents/{agent_name}"]["delete"]["responses"])
    assert call("GET", "/api/agents/nobody").status_code == 404
