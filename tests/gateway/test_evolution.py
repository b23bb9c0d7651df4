"""The learning router through the gateway, its outcome hook, and /evolution (SPEC GW-12)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from nerve.config import Config
from nerve.gateway.app import GatewayState
from nerve.gateway.outcome import Outcome
from nerve.gateway.stats import Usage
from nerve.server import build_app
from tests.conftest import RunningServer, make_config
from tests.fakes.upstream import Reply

MSG = [{"role": "user", "content": "hello"}]
CHAIN = [
    {
        "name": "default",
        "model": {"provider": "primary", "model": "m1"},
        "fallbacks": [{"provider": "secondary", "model": "m2"}],
    }
]
PRICES = {"secondary/m2": {"input": 1.0, "output": 2.0}}


def config(upstream, upstream2, extra: dict[str, Any] | None = None, **learning: Any) -> Config:
    return make_config(
        {"primary": upstream, "secondary": upstream2},
        routes=CHAIN,
        learning={"exploration": 0, "latency_weight": 0, **learning},
        limits={"breaker": {"failures": 1000}},  # so only the learner can stop the calls
        prices=PRICES,
        probes={"interval_seconds": 0},
        **(extra or {}),
    )


@pytest.fixture
async def opened() -> Any:
    states: list[GatewayState] = []

    async def open_(config: Config) -> GatewayState:
        state = GatewayState(config)
        await state.open()
        states.append(state)
        return state

    yield open_
    for state in states:
        await state.close()


async def complete(state: GatewayState, model: str = "auto") -> Any:
    _, served = await state.gateway.complete({"model": model, "messages": MSG})
    return served


@pytest.mark.parametrize("enabled", [True, False])
async def test_learning_stops_paying_for_a_failing_primary(opened, upstream, upstream2, enabled):
    """With learning on, the fallback soon goes first; off, every request pays the failure."""
    state = await opened(config(upstream, upstream2, enabled=enabled))
    for _ in range(10):
        assert (await complete(state)).target.provider == "primary"
    upstream.script(*[Reply(status=500)] * 40)
    served = [await complete(state) for _ in range(30)]
    assert all(s.target.provider == "secondary" for s in served)
    calls_on_primary = len(upstream.requests) - 10
    if enabled:
        assert calls_on_primary <= 10, "the learner moved the fallback first"
        assert served[-1].fallback is False, "first in the plan, so not a fallback"
        assert served[-1].attempts == []
    else:
        assert calls_on_primary == 30
        assert served[-1].fallback is True


async def test_observers_see_each_call_failed_or_not(opened, upstream, upstream2):
    state = await opened(config(upstream, upstream2))
    seen: list[Outcome] = []
    state.gateway.observers.append(seen.append)
    upstream.script(Reply(status=500))
    await complete(state)
    failed, ok = seen
    assert (failed.route, failed.target, failed.ok, failed.fallback) == (
        "default", "primary/m1", False, False
    )  # fmt: skip
    assert failed.error is not None and failed.error.startswith("UpstreamStatus")
    assert failed.usage is None and failed.cost_usd == 0.0 and failed.attempts == ()
    assert failed.decided_by == "default"
    assert (ok.target, ok.ok, ok.fallback, ok.error) == ("secondary/m2", True, True, None)
    assert ok.attempts[0][0] == "primary/m1"
    assert ok.usage == Usage(prompt_tokens=11, completion_tokens=7, total_tokens=18)
    assert ok.cost_usd == pytest.approx((11 * 1.0 + 7 * 2.0) / 1e6)
    assert ok.latency_s > 0 and ok.at > 0
    await complete(state, model="default")
    assert seen[-1].decided_by is None, "the client named the route"


async def test_a_finished_stream_is_an_outcome(opened, upstream, upstream2):
    state = await opened(config(upstream, upstream2))
    seen: list[Outcome] = []
    state.gateway.observers.append(seen.append)
    upstream.script(Reply(chunks=["a", "b"]))
    stream, served = await state.gateway.stream({"model": "auto", "stream": True, "messages": MSG})
    async for _ in stream.rest:
        pass
    assert seen == [], "recorded when the stream ends"
    await state.gateway.finish_stream(stream, served, None)
    assert [(o.target, o.ok) for o in seen] == [("primary/m1", True)]
    assert seen[0].usage is not None and seen[0].usage.total_tokens == 18


async def test_a_raising_observer_is_logged_and_breaks_nothing(opened, upstream, upstream2, caplog):
    state = await opened(config(upstream, upstream2))

    def broken(outcome: Outcome) -> None:
        raise RuntimeError("boom")

    state.gateway.observers.insert(0, broken)
    with caplog.at_level(logging.ERROR, logger="nerve.gateway"):
        served = await complete(state)
    assert served.target.provider == "primary"
    assert "an outcome observer failed" in caplog.text
    candidates = state.gateway.learner.snapshot()["routes"]["default"]["candidates"]
    assert candidates["primary/m1"]["calls"] == 1, "the observers after it still ran"


@pytest.fixture
def evolving() -> Iterator[Callable[[Config], RunningServer]]:
    """A real nerve server (its own /evolution routes)."""
    servers: list[RunningServer] = []

    def start(config: Config) -> RunningServer:
        servers.append(RunningServer(build_app(config)).start())
        return servers[-1]

    yield start
    for server in servers:
        server.stop()


def admin(server: RunningServer) -> dict[str, str]:
    """An admin session's header: resets are operator actions, like /stats/reset."""
    return {"x-nerve-admin-token": server.app.admin.auth.issue().token}


def test_evolution_shows_candidates_and_the_preference(evolving, upstream, upstream2):
    server = evolving(config(upstream, upstream2, enabled=True))
    upstream.script(*[Reply(status=500)] * 10)
    for _ in range(10):
        r = httpx.post(f"{server.url}/v1/chat/completions", json={"model": "auto", "messages": MSG})
        assert r.status_code == 200
    body = httpx.get(f"{server.url}/evolution").json()
    route = body["routes"]["default"]
    assert route["configured"] == ["primary/m1", "secondary/m2"]
    assert route["preference"] == ["secondary/m2", "primary/m1"]
    primary, secondary = route["candidates"]["primary/m1"], route["candidates"]["secondary/m2"]
    assert primary["errors"] == primary["calls"] >= 5 and primary["success_rate"] == 0.0
    assert secondary["calls"] == 10 and secondary["success_rate"] == 1.0
    assert secondary["cost_per_call_usd"] == pytest.approx(25 / 1e6)
    assert secondary["first_choice_share"] > 0
    assert body["config"]["enabled"] is True and body["config"]["exploration"] == 0
    assert body["recent"][0]["target"] == "secondary/m2"

    assert httpx.post(f"{server.url}/evolution/reset", json={"route": "default"}).status_code == 401
    r = httpx.post(
        f"{server.url}/evolution/reset", json={"route": "default"}, headers=admin(server)
    )
    assert r.status_code == 200
    assert r.json()["previous"]["routes"]["default"]["preference"][0] == "secondary/m2"
    after = httpx.get(f"{server.url}/evolution").json()["routes"]["default"]
    assert after["preference"] == ["primary/m1", "secondary/m2"]
    assert httpx.post(f"{server.url}/evolution/reset", headers=admin(server)).status_code == 200


def test_evolution_reset_names_what_is_wrong(evolving, upstream, upstream2):
    server = evolving(config(upstream, upstream2))
    r = httpx.post(f"{server.url}/evolution/reset", json={"route": "nope"}, headers=admin(server))
    assert r.status_code == 404 and "unknown route 'nope'" in r.json()["error"]["message"]
    json = {**admin(server), "content-type": "application/json"}
    r = httpx.post(f"{server.url}/evolution/reset", content=b"{oops", headers=json)
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_json"
    r = httpx.post(f"{server.url}/evolution/reset", content=b"{}", headers=admin(server))
    assert r.status_code == 415 and r.json()["error"]["code"] == "json_required"
    r = httpx.post(f"{server.url}/evolution/reset", json={"route": 3}, headers=admin(server))
    assert r.status_code == 400 and r.json()["error"]["param"] == "route"


def test_evolution_needs_the_api_key_and_its_reset_an_admin_session(evolving, upstream, upstream2):
    server = evolving(config(upstream, upstream2, {"server": {"api_keys": ["k1"]}}))
    assert httpx.get(f"{server.url}/evolution").status_code == 401
    key = {"Authorization": "Bearer k1"}
    assert httpx.post(f"{server.url}/evolution/reset", headers=key).status_code == 401
    ok = httpx.get(f"{server.url}/evolution", headers=key)
    assert ok.status_code == 200 and "default" in ok.json()["routes"]


def test_without_the_admin_panel_the_resets_say_why(evolving, upstream, upstream2):
    server = evolving(config(upstream, upstream2, {"admin": {"enabled": False}}))
    for path in ("/evolution/reset", "/stats/reset"):
        r = httpx.post(f"{server.url}{path}")
        assert r.status_code == 401, path
        assert r.headers["content-type"] == "application/json"
        assert r.json()["error"] == {
            "message": "needs an admin session; admin is disabled",
            "type": "authentication_error",
            "code": "no_admin",
        }


async def test_streaming_finishes_the_stream_once_whatever_leaves_the_block(
    opened, upstream, upstream2
):
    state = await opened(config(upstream, upstream2))
    seen: list[Outcome] = []
    state.gateway.observers.append(seen.append)
    body = {"model": "auto", "stream": True, "messages": MSG}

    upstream.script(Reply(chunks=["a", "b"]))
    async with state.gateway.streaming(body) as held:
        async for _ in held.stream.rest:
            pass
        held.end(None)
    assert [(o.target, o.ok) for o in seen] == [("primary/m1", True)]

    upstream.script(Reply(chunks=["a", "b"]))
    with pytest.raises(RuntimeError, match="the forwarding broke"):
        async with state.gateway.streaming(body) as held:
            raise RuntimeError("the forwarding broke")  # before it could report its end
    assert [(o.target, o.ok) for o in seen[1:]] == [("primary/m1", False)]
    assert held.error is not None and held.ended

    upstream.script(Reply(chunks=["a", "b"]))
    rejected = state.stats.snapshot()
    before = rejected.get("rejections", {}).get("client_disconnected", 0)
    with pytest.raises(asyncio.CancelledError):
        async with state.gateway.streaming(body):
            raise asyncio.CancelledError  # the client went away mid-stream
    after = state.stats.snapshot().get("rejections", {}).get("client_disconnected", 0)
    assert after == before + 1 and len(seen) == 2, "a client leaving is no failed call"
