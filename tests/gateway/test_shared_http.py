"""Shared state at the HTTP edge (SPEC GW-19): /health, the 503 of the closed policy, start-up.

Servers run in threads here (tests/conftest.py `serve`); two real `nerve serve` processes sharing
one Redis are in test_replicas.py.
"""

from __future__ import annotations

import socket
import sys

import httpx
import pytest
from click.testing import CliRunner

from nerve.cli import cli
from nerve.config import load_config
from nerve.errors import ConfigError
from nerve.gateway.app import GatewayState
from tests.conftest import make_config

MSG = [{"role": "user", "content": "hello"}]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def chat(server, path="/v1/chat/completions", **extra):
    body = {"model": "auto", "messages": MSG, **extra}
    return httpx.post(f"{server.url}{path}", json=body, timeout=10)


def test_closed_policy_answers_503_while_redis_is_down(serve, upstream):
    """GW-19: on_error closed: chat and fan-out get an OpenAI-shaped 503; /health degraded."""
    url = f"redis://:hunter2@127.0.0.1:{closed_port()}/15"
    server = serve(make_config({"primary": upstream}, redis={"url": url, "on_error": "closed"}))
    r = chat(server)
    assert r.status_code == 503 and r.headers["retry-after"] == "1"
    error = r.json()["error"]
    assert error["code"] == "shared_state_unavailable" and "Redis" in error["message"]
    r = chat(server, "/task", route="default")
    assert r.status_code == 503 and r.json()["error"]["code"] == "shared_state_unavailable"
    assert upstream.requests == []
    health = httpx.get(f"{server.url}/health").json()
    assert health["status"] == "degraded"
    shared = health["shared_state"]
    assert (shared["backend"], shared["ok"], shared["policy"]) == ("redis", False, "closed")
    assert shared["url"] == url.replace(":hunter2@", "") and shared["last_error"]


def test_local_policy_keeps_serving_while_redis_is_down(serve, upstream):
    """GW-19: on_error local (the default): requests pass on in-process state; /health says so."""
    url = f"redis://127.0.0.1:{closed_port()}/15"
    server = serve(make_config({"primary": upstream}, redis={"url": url}))
    assert chat(server).status_code == 200
    health = httpx.get(f"{server.url}/health").json()
    assert health["status"] == "degraded" and health["shared_state"]["policy"] == "local"
    assert health["shared_state"]["degraded_since"] is not None
    assert httpx.get(f"{server.url}/stats").json()["calls"] == 1


def test_health_shows_the_shared_state_when_redis_answers(redis_url, redis_prefix, serve, upstream):
    """GW-19: /health names the backend, the replicas and no error; local without redis.url."""
    # redis_prefix before serve: its cleanup runs after the server's last flush
    config = make_config(
        {"primary": upstream}, redis={"url": redis_url, "key_prefix": redis_prefix}
    )
    server = serve(config)
    assert chat(server).status_code == 200
    health = httpx.get(f"{server.url}/health").json()
    assert health["status"] == "ok"
    assert health["shared_state"] == {
        "backend": "redis", "url": redis_url, "ok": True, "policy": "local", "replicas": 1,
        "degraded_since": None, "last_error": None,
    }  # fmt: skip
    assert httpx.get(f"{server.url}/stats").json()["calls"] == 1
    local = serve(make_config({"primary": upstream}))
    assert httpx.get(f"{local.url}/health").json()["shared_state"]["backend"] == "local"


def test_redis_url_without_the_redis_package_stops_start_up(monkeypatch, tmp_path):
    """GW-19: a clear error naming the extra to install, from the API and from `nerve serve`."""
    for name in [m for m in sys.modules if m == "redis" or m.startswith("redis.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "redis", None)  # import redis → ImportError
    path = tmp_path / "nerve.yaml"
    path.write_text("redis: {url: 'redis://127.0.0.1:6379/0'}\n")
    with pytest.raises(ConfigError) as caught:
        GatewayState(load_config(str(path), environ={}))
    assert "pip install 'nerve[redis]'" in caught.value.message
    result = CliRunner().invoke(cli, ["serve", "--config", str(path), "--port", "0"])
    assert result.exit_code == 1 and "pip install 'nerve[redis]'" in result.output


def test_several_workers_without_redis_are_refused(tmp_path):
    """GW-19: --workers N without redis.url would multiply every limit by N: usage error."""
    result = CliRunner().invoke(cli, ["serve", "--workers", "2", "--port", "0"])
    assert result.exit_code == 2
    assert "redis.url" in result.output and "2x the configured limits" in result.output
