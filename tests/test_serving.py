"""Hostile clients never starve nerve (issue 13): partial bodies, trickled headers, hoarded
connections, rotated tokens and pages of other origins — while a normal client is served."""

from __future__ import annotations

import socket
import time

import httpx
import pytest

from nerve.errors import ConfigError
from tests.conftest import make_config

URL = "/v1/chat/completions"
CHAT = {"model": "auto", "messages": [{"role": "user", "content": "hi"}]}


def open_socket(port: int) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    return s


def closed_within(s: socket.socket, seconds: float) -> bytes:
    """What the server sent before closing `s` (b"" if nothing), or fail after `seconds`."""
    s.settimeout(seconds)
    got = b""
    while True:
        chunk = s.recv(65536)  # blocks until data, close, or the timeout (a failure)
        if not chunk:
            return got
        got += chunk


def partial_body(port: int) -> socket.socket:
    s = open_socket(port)
    s.sendall(
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"model": '
    )
    return s


def test_clients_that_send_part_of_a_body_and_go_quiet_starve_nobody(serve, upstream):
    limits = {"rate": {"max_concurrent": 30}, "body_timeout_seconds": 1.0}
    server = serve(make_config({"primary": upstream}, limits=limits))
    quiet = [partial_body(server.port) for _ in range(30)]
    try:
        for _ in range(5):  # the limiter's slots are taken only after a body is read
            assert httpx.post(f"{server.url}{URL}", json=CHAT, timeout=10).status_code == 200
        answers = [closed_within(s, 10) for s in quiet]
    finally:
        for s in quiet:
            s.close()
    assert all(a.startswith(b"HTTP/1.1 408") and b"body_timeout" in a for a in answers)


def test_a_connection_whose_headers_never_complete_is_closed(serve, upstream):
    server = serve(make_config({"primary": upstream}, limits={"header_timeout_seconds": 0.5}))
    slow = open_socket(server.port)
    idle = open_socket(server.port)
    try:
        slow.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0")  # and no more
        assert httpx.post(f"{server.url}{URL}", json=CHAT, timeout=10).status_code == 200
        assert closed_within(slow, 10) == b""
        assert closed_within(idle, 10) == b"", "connected and sent nothing: closed as well"
    finally:
        slow.close()
        idle.close()


def test_one_address_may_hold_only_so_many_connections(serve, upstream):
    limits = {"max_connections_per_client": 4, "header_timeout_seconds": 60}
    server = serve(make_config({"primary": upstream}, limits=limits))
    held = [open_socket(server.port) for _ in range(4)]
    try:
        extra = open_socket(server.port)
        assert closed_within(extra, 10) == b"", "the fifth connection is refused"
        extra.close()
    finally:
        for s in held:
            s.close()
    deadline = time.monotonic() + 10  # the server sees the closes shortly
    while True:
        try:
            r = httpx.post(f"{server.url}{URL}", json=CHAT, timeout=10)
            break
        except httpx.TransportError:
            assert time.monotonic() < deadline, "connections never came back"
            time.sleep(0.02)  # polling until the server has seen the closes, bounded
    assert r.status_code == 200


def test_without_keys_a_new_bearer_token_is_not_a_new_client(serve, upstream):
    rate = {"burst": 2, "refill_per_second": 0.001}
    server = serve(make_config({"primary": upstream}, limits={"rate": rate}))
    statuses = [
        httpx.post(f"{server.url}{URL}", json=CHAT, timeout=10,
                   headers={"authorization": f"Bearer rotated-{i}"}).status_code
        for i in range(4)
    ]  # fmt: skip
    assert statuses == [200, 200, 429, 429]


@pytest.mark.parametrize(
    ("headers", "status", "code"),
    [
        ({"origin": "https://evil.example", "content-type": "text/plain"}, 403, "cross_origin"),
        ({"origin": "https://evil.example", "content-type": "application/json"}, 403,
         "cross_origin"),
        ({"origin": "null", "content-type": "application/json"}, 403, "cross_origin"),
        ({"content-type": "text/plain"}, 415, "json_required"),
        ({"content-type": "application/x-www-form-urlencoded"}, 415, "json_required"),
        ({}, 415, "json_required"),
    ],
)  # fmt: skip
def test_a_page_of_another_origin_and_non_json_bodies_cannot_drive_the_gateway(
    serve, upstream, headers, status, code
):
    server = serve(make_config({"primary": upstream}))
    body = b'{"model": "auto", "messages": [{"role": "user", "content": "spend"}]}'
    for path in (URL, "/api/memory/store", "/parallel"):
        r = httpx.post(f"{server.url}{path}", content=body, headers=headers, timeout=10)
        assert (r.status_code, r.json()["error"]["code"]) == (status, code), path
    assert upstream.requests == [], "nothing refused reached a model"
    same = {"origin": server.url, "content-type": "application/json"}
    assert httpx.post(f"{server.url}{URL}", content=body, headers=same).status_code == 200


def test_listed_cors_origins_get_preflights_and_headers_and_no_one_else(serve, upstream):
    app = "https://app.example"
    server = serve(make_config({"primary": upstream}, server={"cors_origins": [app]}))
    preflight = httpx.options(f"{server.url}{URL}", headers={
        "origin": app, "access-control-request-method": "POST",
        "access-control-request-headers": "content-type, authorization"})  # fmt: skip
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == app
    r = httpx.post(f"{server.url}{URL}", json=CHAT, headers={"origin": app}, timeout=10)
    assert r.status_code == 200 and r.headers["access-control-allow-origin"] == app
    assert "x-nerve-route" in r.headers["access-control-expose-headers"]
    other = httpx.post(f"{server.url}{URL}", json=CHAT, timeout=10,
                       headers={"origin": "https://other.example"})  # fmt: skip
    assert other.status_code == 403 and "access-control-allow-origin" not in other.headers


@pytest.mark.parametrize(
    ("path", "extra"),
    [
        ("/mcp", b"Accept: application/json, text/event-stream\r\n"),
        ("/api/memory/store", b""),  # FastAPI's body parsing must not turn it into a 400
    ],
)
def test_a_quiet_partial_body_elsewhere_times_out_with_408_too(serve, upstream, path, extra):
    server = serve(make_config({"primary": upstream}, limits={"body_timeout_seconds": 0.5}))
    s = open_socket(server.port)
    try:
        s.sendall(
            b"POST " + path.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\n" + extra + b"Content-Length: 500\r\n\r\n{"
        )
        answer = closed_within(s, 10)
    finally:
        s.close()
    assert answer.startswith(b"HTTP/1.1 408") and b"body_timeout" in answer


def test_an_empty_config_text_is_refused_by_a_reload(serve, upstream):
    server = serve(make_config({"primary": upstream}))
    with pytest.raises(ConfigError, match="is empty"):
        server.call(server.app.reload("  \n"))
    assert [p.name for p in server.app.config.providers] == ["primary"]
