"""Where nerve may send an agent call (SPEC PR-4, SSRF): http(s) only; loopback, or hosts in
`agents.allowed_hosts`; a name must resolve to loopback at registration and at every call;
redirects never lead to another host."""

from __future__ import annotations

import socket

import pytest

from nerve.errors import RequestError
from tests.agents.fake_agent import FakeAgent

REAL_GETADDRINFO = socket.getaddrinfo


@pytest.fixture
def dns(monkeypatch):
    """dns["agent.test"] = "10.1.2.3": what that name resolves to (others resolve as usual)."""
    names: dict[str, str] = {}

    def getaddrinfo(host, port, family=0, type=0, proto=0, flags=0):
        if host in names:
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (names[host], port or 0))]
        return REAL_GETADDRINFO(host, port, family, type, proto, flags)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return names


async def refused(registry, endpoint: str) -> str:
    with pytest.raises(RequestError) as caught:
        await registry.register("x", endpoint, ["t"])
    assert caught.value.param == "endpoint"
    return caught.value.message


@pytest.mark.parametrize(
    "endpoint",
    ["ftp://127.0.0.1/agent", "file:///etc/passwd", "gopher://localhost/", "//127.0.0.1/"],
)
async def test_only_http_and_https_endpoints_are_accepted(local, endpoint):
    assert "must be an http:// or https:// URL" in await refused(await local(), endpoint)


@pytest.mark.parametrize(
    "endpoint",
    [
        "http://10.0.0.1/",
        "http://169.254.169.254/latest/meta-data",
        "https://[::ffff:10.0.0.1]/",
        "http://0.0.0.0:8080/",
        "http://[fd00::1]/",
    ],
)
async def test_a_private_address_is_refused_with_the_setting_that_allows_it(local, endpoint):
    message = await refused(await local(), endpoint)
    assert "is not loopback" in message and "agents.allowed_hosts" in message


@pytest.mark.parametrize(
    ("allowed", "neighbour_allowed"),
    [("10.0.0.1", False), ("10.0.0.1.", False), ("10.0.0.0/8", True)],
)
async def test_allowed_hosts_opens_an_address_or_a_network(local, allowed, neighbour_allowed):
    registry = await local(allowed_hosts=[allowed])
    stored = await registry.register("x", "http://10.0.0.1:8080/agent", ["t"])
    assert stored["endpoint"] == "http://10.0.0.1:8080/agent"
    if neighbour_allowed:
        await registry.register("y", "http://10.0.0.2:8080/agent", ["t"])
    else:
        assert "is not loopback" in await refused(registry, "http://10.0.0.2:8080/agent")


async def test_loopback_names_and_addresses_need_no_setting(local):
    registry = await local()
    for endpoint in ("http://localhost:1/", "http://127.0.0.5/", "https://[::1]:8443/a"):
        await registry.register("x", endpoint, ["t"])


async def test_a_name_resolving_to_a_private_address_is_refused_unless_allowed(local, dns):
    dns["agent.test"] = "10.1.2.3"
    message = await refused(await local(), "http://agent.test/")
    assert "agent.test resolves to 10.1.2.3, which is not loopback" in message
    assert "agents.allowed_hosts" in message
    allowed = await local(allowed_hosts=["AGENT.test"])
    assert (await allowed.register("x", "http://agent.test/", []))["endpoint"]


async def test_a_name_that_does_not_resolve_is_refused(local):
    message = await refused(await local(), "http://no-such-host.invalid/")
    assert "cannot be resolved" in message


async def test_a_name_repointed_after_registration_is_refused_at_call_time(local, dns, agent):
    dns["agent.test"] = "127.0.0.1"
    registry = await local()
    port = agent.url.rsplit(":", 1)[1]
    await registry.register("x", f"http://agent.test:{port}/echo?close", ["t"])
    assert (await registry.route("x", "t", {}))["success"] is True
    dns["agent.test"] = "10.1.2.3"  # DNS rebinding
    result = await registry.route("x", "t", {}, idempotent=True)
    assert result["success"] is False and result["fallback"] is True
    assert "endpoint refused: host agent.test resolves to 10.1.2.3" in result["error"]
    assert agent.hits("/echo") == 1


async def test_an_endpoint_no_longer_allowed_is_refused_at_call_time(tmp_path, local):
    from nerve.agents import AgentRegistry
    from nerve.agents.store import SQLiteAgentStore

    before = AgentRegistry(SQLiteAgentStore(tmp_path / "shared.db"), allowed_hosts=["10.0.0.1"])
    await before.open()
    await before.register("x", "http://10.0.0.1:8080/", ["t"])
    await before.close()
    after = AgentRegistry(SQLiteAgentStore(tmp_path / "shared.db"), timeout_seconds=30)
    await after.open()
    try:
        result = await after.route("x", "t", {})  # refused before any connection: no wait
    finally:
        await after.close()
    assert result["success"] is False
    assert "endpoint refused: host 10.0.0.1 is not loopback" in result["error"]


@pytest.mark.parametrize("elsewhere", ["localhost", "127.0.0.1:other-port"])
async def test_a_redirect_to_another_host_is_refused_and_not_followed(local, agent, elsewhere):
    with FakeAgent("other") as other:
        port = other.url.rsplit(":", 1)[1]
        target = f"http://localhost:{port}/echo"
        agent.redirect_to = target if elsewhere == "localhost" else f"{other.url}/echo"
        registry = await local()
        await registry.register("x", f"{agent.url}/redirect", ["t"])
        result = await registry.route("x", "t", {}, idempotent=True)
        assert result["success"] is False and result["fallback"] is True
        assert "redirected to another host" in result["error"]
        assert agent.hits("/redirect") == 1 and other.hits() == 0


async def test_a_redirect_to_a_public_site_is_refused(local, agent):
    agent.redirect_to = "http://example.com/"
    registry = await local()
    await registry.register("x", f"{agent.url}/redirect", ["t"])
    result = await registry.route("x", "t", {})
    assert "redirected to another host (example.com)" in result["error"]
