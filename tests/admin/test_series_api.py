"""GET /admin/api/series: the dashboard charts' time series (calls, errors, fallbacks, tokens,
cost, p50/p95 per minute or per 15 minutes; overall, per route, per model). Time is the harness's
ManualClock, moved minute by minute: no sleeps."""

from __future__ import annotations

import itertools

import httpx

from tests.admin.conftest import Harness
from tests.fakes.upstream import FakeUpstream, Reply

USAGE = {"prompt_tokens": 7, "completion_tokens": 5, "total_tokens": 12}


async def chat(client: httpx.AsyncClient) -> httpx.Response:
    body = {"model": "auto", "messages": [{"role": "user", "content": "hello"}]}
    return await client.post("/v1/chat/completions", json=body)


async def test_calls_land_in_their_minute_per_route_and_per_model(
    admin: Harness, upstream: FakeUpstream
) -> None:
    upstream.script(Reply(usage=USAGE), Reply(usage=USAGE), Reply(usage=USAGE))
    async with admin.session() as client:
        assert (await chat(client)).status_code == 200
        admin.clock.advance(60)
        assert (await chat(client)).status_code == 200
        assert (await chat(client)).status_code == 200
        data = (await client.get("/admin/api/series?window=1h&by=route")).json()
        by_model = (await client.get("/admin/api/series", params={"by": "model"})).json()
    assert data["window"] == "1h" and data["by"] == "route" and data["bucket_seconds"] == 60
    stamps = data["timestamps"]
    assert len(stamps) == 60 and stamps[-1] == int(admin.clock() // 60) * 60
    assert all(b - a == 60 for a, b in itertools.pairwise(stamps))
    total = data["total"]
    assert total["calls"][-2:] == [1, 2] and sum(total["calls"]) == 3
    assert total["tokens"][-2:] == [12, 24] and sum(total["errors"]) == 0
    assert total["p50_ms"][-1] is not None and total["p95_ms"][0] is None
    assert set(total) == {"calls", "errors", "fallbacks", "tokens", "cost_usd", "p50_ms", "p95_ms"}
    assert list(data["series"]) == ["default"]
    assert data["series"]["default"]["calls"] == total["calls"]
    assert list(by_model["series"]) == ["primary/m1"] and by_model["window"] == "1h"


async def test_errors_count_and_are_not_sampled_for_latency(
    admin: Harness, upstream: FakeUpstream
) -> None:
    upstream.script(Reply(status=500, json={"error": {"message": "boom"}}))
    async with admin.session() as client:
        await chat(client)
        data = (await client.get("/admin/api/series")).json()
    assert data["total"]["calls"][-1] == data["total"]["errors"][-1] >= 1
    assert data["total"]["p50_ms"][-1] is None


async def test_the_24h_window_sums_quarter_hours_and_forgets_what_is_older(
    admin: Harness, upstream: FakeUpstream
) -> None:
    upstream.script(*[Reply(usage=USAGE)] * 5)
    async with admin.session() as client:
        await chat(client)  # will be more than 24 h old
        admin.clock.advance(3600)
        await chat(client)
        admin.clock.advance(60)
        await chat(client)
        await chat(client)
        admin.clock.advance(24 * 3600 - 3600 - 60 + 5 * 60)  # the first call: 24 h 5 min ago
        await chat(client)  # opens a new minute: the ones older than 24 h are dropped
    async with admin.session() as client:  # the first session expired meanwhile
        day = (await client.get("/admin/api/series?window=24h")).json()
        hour = (await client.get("/admin/api/series?window=1h")).json()
    assert day["bucket_seconds"] == 900 and len(day["timestamps"]) == 96
    assert all(t % 900 == 0 for t in day["timestamps"])
    assert sum(day["total"]["calls"]) == 4
    assert [n for n in day["total"]["calls"] if n] == [3, 1]  # two minutes in one quarter
    assert day["total"]["tokens"][-1] == 12 and sum(day["total"]["tokens"]) == 48
    assert sum(hour["total"]["calls"]) == 1
    minutes = admin.app.gateway.stats.timeseries.local(0)
    assert len(minutes) == 3 and max(minutes) - min(minutes) < 1440


async def test_a_bad_window_or_by_is_a_clear_400(admin: Harness) -> None:
    async with admin.session() as client:
        window = await client.get("/admin/api/series?window=7d")
        by = await client.get("/admin/api/series?by=user")
    assert window.status_code == 400 and by.status_code == 400
    assert "'window' is one of 1h, 24h" in window.json()["error"]["message"]
    assert window.json()["error"]["param"] == "window"
    assert "'by' is one of route, model" in by.json()["error"]["message"]


async def test_the_series_needs_an_admin_session(admin: Harness) -> None:
    async with admin.client() as client:
        assert (await client.get("/admin/api/series")).status_code == 401
