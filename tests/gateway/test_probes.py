"""Active health probes (SPEC GW-14): every target's model list, results in /stats and /health."""

from __future__ import annotations

import socket

import httpx
import pytest

from nerve.config import parse_config
from nerve.errors import NerveError
from nerve.gateway.app import GatewayState
from tests.conftest import make_config
from tests.fakes.upstream import Reply

CHAIN = [
    {
        "name": "default",
        "model": {"provider": "primary", "model": "m1"},
        "fallbacks": [{"provider": "anthropic", "model": "claude"}],
    }
]


@pytest.fixture
async def state(upstream, upstream2, clock):
    config = make_config(
        {"primary": upstream, "anthropic": upstream2}, routes=CHAIN, probes={"interval_seconds": 0}
    )
    state = GatewayState(config, clock=clock)
    await state.open()
    yield state
    await state.close()


async def test_a_probe_asks_each_target_for_its_model_list(state, upstream, upstream2):
    results = await state.prober.probe_once()
    assert results["primary/m1"]["ok"] is True and results["anthropic/claude"]["ok"] is True
    assert upstream.requests[-1].path == "/v1/models"
    assert upstream2.requests[-1].headers["x-api-key"] == "sk-ant-test"


async def test_a_probe_success_closes_a_half_open_breaker(state, upstream, clock):
    """GW-14 + GW-7: after the wait, a successful probe closes the breaker with no user call."""
    for _ in range(3):
        await state.breakers.record_failure("primary/m1")
    assert await state.breakers.state("primary/m1") == "open"
    assert (await state.prober.probe_once())["primary/m1"]["skipped"] == "circuit open"
    clock.advance(61)
    assert (await state.prober.probe_once())["primary/m1"]["ok"] is True
    assert await state.breakers.state("primary/m1") == "closed"


async def test_probes_that_succeed_do_not_keep_a_failing_chat_model_open(state, upstream):
    """A provider whose /models answers while its chat fails is still cut off: probes between
    the failing calls do not reset their count."""
    upstream.script(*[Reply(status=500)] * 3)
    chat = {"model": "primary/m1", "messages": [{"role": "user", "content": "hi"}]}
    for _ in range(2):
        with pytest.raises(NerveError):
            await state.gateway.complete(chat)
        assert (await state.prober.probe_once())["primary/m1"]["ok"] is True
    with pytest.raises(NerveError):
        await state.gateway.complete(chat)
    assert await state.breakers.state("primary/m1") == "open"
    assert (await state.prober.probe_once())["primary/m1"]["skipped"] == "circuit open"


async def test_a_failing_probe_counts_against_the_breaker(clock):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]  # nothing listens there once the block ends
    config = parse_config(
        {
            "providers": [
                {"name": "gone", "base_url": f"http://127.0.0.1:{dead}/v1", "api_key": "k"}
            ],
            "routes": [{"name": "default", "model": {"provider": "gone", "model": "m"}}],
            "probes": {"interval_seconds": 0},
        },
        environ={},
    )
    state = GatewayState(config, clock=clock)
    await state.open()
    try:
        for _ in range(3):
            result = (await state.prober.probe_once())["gone/m"]
        assert result["ok"] is False and result["error"]
        assert await state.breakers.state("gone/m") == "open"
    finally:
        await state.close()


def test_probes_run_on_their_interval_and_show_in_stats_and_health(serve, upstream):
    config = make_config({"primary": upstream}, probes={"interval_seconds": 0.05})
    server = serve(config)
    seen = upstream.wait_for_requests(1)  # the first probe, one interval after start
    assert seen[0].path == "/v1/models"
    stats = httpx.get(f"{server.url}/stats").json()
    health = httpx.get(f"{server.url}/health").json()
    assert "primary/m1" in stats["probes"] and "primary/m1" in health["probes"]
