"""DNS-rebinding guard: without API keys, only requests addressed to the server's own names."""

from __future__ import annotations

import httpx
import pytest

from nerve.config import ServerConfig
from nerve.errors import MisdirectedRequest
from nerve.hostguard import HostGuard
from tests.conftest import make_config


def scope(host: str | None) -> dict[str, object]:
    return {"headers": [] if host is None else [(b"host", host.encode())]}


@pytest.mark.parametrize(
    "host", ["localhost", "localhost:8080", "127.0.0.1:9", "[::1]:8080", "::1", "LOCALHOST"]
)
def test_loopback_names_are_served(host: str) -> None:
    HostGuard(ServerConfig()).check(scope(host))


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8080", "127.0.0.1.evil.io", None])
def test_other_names_are_misdirected(host: str | None) -> None:
    with pytest.raises(MisdirectedRequest, match=r"server\.allowed_hosts"):
        HostGuard(ServerConfig()).check(scope(host))


def test_allowed_hosts_open_the_guard() -> None:
    HostGuard(ServerConfig(allowed_hosts=["nerve.internal"])).check(scope("nerve.internal:443"))


def test_a_rebinding_page_gets_421_from_every_surface(serve, upstream) -> None:
    server = serve(make_config({"primary": upstream}, probes={"interval_seconds": 0}))
    evil = {"host": f"evil.example:{server.port}"}
    chat = {"model": "auto", "messages": [{"role": "user", "content": "hi"}]}
    for method, path, body in (
        ("POST", "/v1/chat/completions", chat),  # the hot path, before the framework
        ("POST", "/api/process", {"text": "delete all my files", "execute": True}),
        ("GET", "/stats", None),
        ("POST", "/mcp", {}),
    ):
        r = httpx.request(method, f"{server.url}{path}", json=body, headers=evil, timeout=10)
        assert r.status_code == 421, path
        assert r.json()["error"]["code"] == "unknown_host"
    assert not upstream.requests
    assert httpx.get(f"{server.url}/health", timeout=10).status_code == 200  # 127.0.0.1:port
