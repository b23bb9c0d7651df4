"""SPEC PR-3: a POST to /mcp that is not one JSON-RPC 2.0 message is answered HTTP 400 with
the JSON-RPC error for it (§5.1: -32700 Parse error, -32600 Invalid Request, id null when it
cannot be told), never dropped with a 202; valid messages reach the SDK as before."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from nerve.config import Config
from tests.conftest import RunningServer, make_config
from tests.fakes.upstream import FakeUpstream

Serve = Callable[[Config], RunningServer]
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602


@pytest.fixture
def server(serve: Serve, upstream: FakeUpstream) -> RunningServer:
    return serve(make_config({"primary": upstream}, limits={"max_body_bytes": 4096}))


@pytest.fixture
async def raw(server: RunningServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=server.url, headers=HEADERS) as client:
        yield client


def ping(**fields: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 7, "method": "ping", **fields}).encode()


def without(key: str) -> bytes:
    message = json.loads(ping())
    del message[key]
    return json.dumps(message).encode()


NOT_JSON = [b"", b"{", b'{"jsonrpc": "2.0", "id": 1, "method": "ping"} trailing', b"\xff\xfe{}",
            b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": NaN}}']  # fmt: skip
BAD_ID = [True, False, 1.5, 1.0, {}, {"a": 1}, [], [1], None]
# (body, the id the error answers with)
MALFORMED = [
    (without("jsonrpc"), 7),
    (ping(jsonrpc="1.0"), 7),
    (ping(jsonrpc=2.0), 7),
    (without("method"), 7),
    (ping(method=5), 7),
    (ping(method=None), 7),
    (ping(params="x"), 7),
    (ping(params=5), 7),
    (ping(params=None), 7),
    (ping(result={}), 7),  # a request and a response at once
    (b'{"jsonrpc": "2.0", "id": 7, "result": {}, "error": {"code": 1, "message": "m"}}', 7),
    (b'{"jsonrpc": "2.0", "id": 7, "result": 5}', 7),
    (b'{"jsonrpc": "2.0", "id": 7, "error": {"code": "x", "message": "m"}}', 7),
    (b'{"jsonrpc": "2.0", "id": 1.5, "result": {}}', None),
    (b"[]", None),  # a batch: JSON-RPC allows one, MCP (since 2025-06-18) does not
    (b"[" + ping() + b"]", None),
    (b"[" + ping() + b", " + ping(id=8) + b"]", None),
    (b'"ping"', None),
    (b"42", None),
    (b"null", None),
    (b"{}", None),
]


def error_of(answer: httpx.Response) -> dict[str, Any]:
    assert answer.status_code == 400, answer.text
    assert answer.headers["content-type"] == "application/json"
    body: dict[str, Any] = answer.json()
    assert body["jsonrpc"] == "2.0" and "result" not in body and "id" in body
    assert isinstance(body["error"]["message"], str)
    return body


@pytest.mark.parametrize("body", NOT_JSON)
async def test_a_body_that_is_not_json_is_a_parse_error(
    raw: httpx.AsyncClient, body: bytes
) -> None:
    answer = error_of(await raw.post("/mcp", content=body))
    assert answer["error"]["code"] == PARSE_ERROR and answer["id"] is None


@pytest.mark.parametrize("id_", BAD_ID, ids=repr)
async def test_a_request_whose_id_is_not_a_string_or_integer_is_refused_not_dropped(
    raw: httpx.AsyncClient, id_: object
) -> None:
    answer = error_of(await raw.post("/mcp", content=ping(id=id_)))
    assert answer["error"]["code"] == INVALID_REQUEST and answer["id"] is None
    assert '"id"' in answer["error"]["message"]


@pytest.mark.parametrize(("body", "id_"), MALFORMED)
async def test_a_malformed_envelope_is_an_invalid_request(
    raw: httpx.AsyncClient, body: bytes, id_: int | None
) -> None:
    answer = error_of(await raw.post("/mcp", content=body))
    assert answer["error"]["code"] == INVALID_REQUEST, answer
    assert answer["id"] == id_


async def test_array_params_are_invalid_params_answered_with_the_request_id(
    raw: httpx.AsyncClient,
) -> None:
    answer = error_of(await raw.post("/mcp", content=ping(params=[1, 2])))
    assert answer["error"]["code"] == INVALID_PARAMS and answer["id"] == 7


@pytest.mark.parametrize("id_", [7, 0, -3, 10**30, "", "abc"], ids=repr)
async def test_a_valid_request_still_reaches_the_sdk_and_is_answered_with_its_id(
    raw: httpx.AsyncClient, id_: object
) -> None:
    answer = await raw.post("/mcp", content=ping(id=id_, params={}))
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"jsonrpc": "2.0", "id": id_, "result": {}}


@pytest.mark.parametrize(
    "body",
    [
        b'{"jsonrpc": "2.0", "method": "notifications/initialized"}',
        b'{"jsonrpc": "2.0", "method": "notifications/no-such-thing", "params": {}}',
        b'{"jsonrpc": "2.0", "id": 3, "result": {}}',  # a response to a server request
        b'{"jsonrpc": "2.0", "id": null, "error": {"code": -32000, "message": "no"}}',
    ],
)
async def test_notifications_and_responses_are_accepted_with_202_and_no_body(
    raw: httpx.AsyncClient, body: bytes
) -> None:
    answer = await raw.post("/mcp", content=body)
    assert answer.status_code == 202 and answer.content == b""


async def test_the_body_limit_holds_before_the_envelope_is_read(raw: httpx.AsyncClient) -> None:
    padded = ping(params={"pad": "x" * 5000})
    assert (await raw.post("/mcp", content=padded)).status_code == 413

    async def chunked() -> AsyncIterator[bytes]:  # no Content-Length: refused mid-read
        for start in range(0, len(padded), 1000):
            yield padded[start : start + 1000]

    assert (await raw.post("/mcp", content=chunked())).status_code == 413
