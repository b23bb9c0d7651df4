"""`/ready` (for a load balancer) is 200 only while the server is fully started and its store
answers; a cut-off Redis under `redis.on_error: closed` makes it 503 with the reason, while
`/health` keeps answering. Real servers on real sockets."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import pytest

from nerve.readiness import Readiness
from nerve.server import build_app
from tests.conftest import RunningServer, make_config
from tests.fakes.upstream import FakeUpstream

Start = Callable[..., RunningServer]


@pytest.fixture
def start(upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch) -> Iterator[Start]:
    monkeypatch.setenv("NERVE_ADMIN_PASSWORD", "readiness-tests-password")
    running: list[RunningServer] = []

    def go(**extra: object) -> RunningServer:
        server = {"config_poll_seconds": 0, "api_keys": ["k1"]}
        config = make_config({"primary": upstream}, probes={"interval_seconds": 0}, server=server,
                             **extra)  # fmt: skip
        running.append(RunningServer(build_app(config)).start())
        return running[-1]

    yield go
    for server in running:
        server.stop()


def test_a_started_server_is_ready_without_a_key(start: Start) -> None:
    server = start()
    r = httpx.get(f"{server.url}/ready")
    assert (r.status_code, r.json()) == (200, {"ready": True, "reasons": []})


def test_redis_cut_off_under_a_closed_policy_is_not_ready_but_healthy(start: Start) -> None:
    server = start(redis={"url": "redis://127.0.0.1:1/0", "on_error": "closed"})
    httpx.get(f"{server.url}/health")  # a call that finds Redis gone
    r = httpx.get(f"{server.url}/ready")
    assert r.status_code == 503 and r.json()["ready"] is False
    (reason,) = r.json()["reasons"]
    assert reason.startswith("redis: unreachable (") and "redis.on_error is closed" in reason
    assert httpx.get(f"{server.url}/health").status_code == 200


async def test_readiness_before_start_and_on_a_failing_check() -> None:
    async def broken() -> str | None:
        raise ConnectionError("store is gone")

    async def fine() -> str | None:
        return None

    ready = Readiness({"store": broken, "other": fine})
    assert await ready.reasons() == ["starting or stopping"]
    ready.serving = True
    assert await ready.reasons() == ["store: ConnectionError: store is gone"]
