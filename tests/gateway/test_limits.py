"""Rate limits, request validation, body size and client auth at the HTTP edge."""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import make_config
from tests.fakes.upstream import Reply

MSG = [{"role": "user", "content": "hello"}]
URL = "/v1/chat/completions"


def limits(**rate):
    base = {
        "window_requests": 1000,
        "window_seconds": 60,
        "burst": 1000,
        "refill_per_second": 1,
        "max_concurrent": 100,
    }
    return {"rate": {**base, **rate}}


def post(server, body=None, **kw):
    return httpx.post(
        f"{server.url}{URL}", json=body or {"model": "auto", "messages": MSG}, timeout=10, **kw
    )


def test_the_burst_bucket_refuses_with_429_naming_burst(serve, upstream, clock):
    """GW-15: token bucket of `burst`, refilled per second; Retry-After says when."""
    server = serve(make_config({"primary": upstream}, limits=limits(burst=2)))
    assert post(server).status_code == 200
    assert post(server).status_code == 200
    r = post(server)
    assert r.status_code == 429
    assert r.json()["error"]["code"] == "burst" and "burst" in r.json()["error"]["message"]
    assert r.headers["retry-after"] == "1"
    clock.advance(1)
    assert post(server).status_code == 200


def test_the_window_refuses_with_429_naming_window(serve, upstream, clock):
    """GW-15: at most window_requests per window_seconds."""
    server = serve(make_config({"primary": upstream}, limits=limits(window_requests=2)))
    post(server), post(server)
    r = post(server)
    assert r.status_code == 429 and r.json()["error"]["code"] == "window"
    assert 1 <= int(r.headers["retry-after"]) <= 60
    clock.advance(61)
    assert post(server).status_code == 200


def test_concurrent_requests_past_the_cap_are_refused_naming_concurrent(serve, upstream):
    """GW-15: max_concurrent in-flight requests per client; a held stream keeps its slot."""
    server = serve(make_config({"primary": upstream}, limits=limits(max_concurrent=1)))
    upstream.script(Reply(chunks=["a", "b"], gate_after=1))
    body = {"model": "auto", "stream": True, "messages": MSG}
    with httpx.stream("POST", f"{server.url}{URL}", json=body, timeout=10) as held:
        lines = held.iter_lines()  # keep a reference: a dropped iterator closes the response
        next(lines)  # the first stream is in flight
        r = post(server)
        assert r.status_code == 429 and r.json()["error"]["code"] == "concurrent"
        upstream.release()
        assert [line for line in lines if line][-1] == "data: [DONE]"
    assert post(server).status_code == 200


def test_each_client_has_its_own_limits(serve, upstream):
    """GW-15: clients are told apart by API key."""
    server = serve(
        make_config(
            {"primary": upstream}, limits=limits(burst=1), server={"api_keys": ["alice", "bob"]}
        )
    )
    assert post(server, headers={"authorization": "Bearer alice"}).status_code == 200
    assert post(server, headers={"authorization": "Bearer alice"}).status_code == 429
    assert post(server, headers={"authorization": "Bearer bob"}).status_code == 200


@pytest.mark.parametrize(
    ("raw", "param"),
    [
        (b'{"model": "auto", "messages": [', None),
        (b"[1, 2]", None),
        (b'{"messages": [{"role": "user", "content": "x"}]}', "model"),
        (b'{"model": "auto"}', "messages"),
        (b'{"model": "auto", "messages": []}', "messages"),
        (
            b'{"model": "auto", "messages": [{"role": "wizard", "content": "x"}]}',
            "messages[0].role",
        ),
        (b'{"model": "auto", "messages": [{"role": "user", "content": 5}]}', "messages[0].content"),
        (
            b'{"model": "auto", "messages": [{"role": "user", "content": "x"}], "stream": "yes"}',
            "stream",
        ),
    ],
)
def test_bad_requests_get_400_naming_the_field(serve, upstream, raw, param):
    """GW-16: invalid JSON and malformed fields → 400 with an OpenAI-style error; nothing sent."""
    server = serve(make_config({"primary": upstream}))
    r = httpx.post(f"{server.url}{URL}", content=raw, headers={"content-type": "application/json"})
    assert r.status_code == 400
    error = r.json()["error"]
    assert error["type"] == "invalid_request_error" and error["message"]
    assert error["param"] == param
    assert upstream.requests == []


def test_a_body_over_the_limit_is_refused_with_413(serve, upstream):
    """GW-16: max_body_bytes; refused from Content-Length, and mid-read when chunked."""
    server = serve(make_config({"primary": upstream}, limits={"max_body_bytes": 4096}))
    big = {"model": "auto", "messages": [{"role": "user", "content": "x" * 5000}]}
    r = post(server, big)
    assert r.status_code == 413 and "4096" in r.json()["error"]["message"]

    def chunked():
        yield b'{"model": "auto", "messages": [{"role": "user", "content": "'
        for _ in range(10):
            yield b"y" * 1000
        yield b'"}]}'

    r = httpx.post(
        f"{server.url}{URL}", content=chunked(), headers={"content-type": "application/json"}
    )
    assert r.status_code == 413
    assert upstream.requests == []


def test_errors_for_unknown_paths_are_openai_shaped(serve, upstream):
    """Every HTTP error is JSON {"error": {"message", "type", "code"}}."""
    server = serve(make_config({"primary": upstream}))
    r = httpx.get(f"{server.url}/v1/nothing-here")
    assert r.status_code == 404 and r.json()["error"]["type"] == "not_found_error"
    r = httpx.get(f"{server.url}{URL}")
    assert r.status_code == 405 and "GET" in r.json()["error"]["message"]


def test_with_api_keys_configured_clients_must_present_one(serve, upstream):
    """Security default: server.api_keys → Authorization: Bearer <key> required (not on /health)."""
    server = serve(make_config({"primary": upstream}, server={"api_keys": ["secret-1"]}))
    r = post(server)
    assert r.status_code == 401 and r.json()["error"]["type"] == "authentication_error"
    assert post(server, headers={"authorization": "Bearer wrong"}).status_code == 401
    assert post(server, headers={"authorization": "Bearer secret-1"}).status_code == 200
    assert httpx.get(f"{server.url}/stats").status_code == 401
    assert httpx.get(f"{server.url}/health").status_code == 200
    assert upstream.requests[-1].headers["authorization"] == "Bearer sk-primary"
