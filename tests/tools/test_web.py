"""AS-4: web_search (Brave) and weather (OpenWeatherMap) against fakes on their wire formats."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from nerve.tools import Services, ToolContext
from tests.fakes.brave import FakeBrave
from tests.fakes.weather import FakeWeather
from tests.tools.conftest import make_config


@pytest.fixture
def brave() -> Iterator[FakeBrave]:
    with FakeBrave(key="b-key") as fake:
        yield fake


@pytest.fixture
def owm() -> Iterator[FakeWeather]:
    with FakeWeather(key="w-key") as fake:
        yield fake


@pytest.fixture
def web_ctx(brave, owm, workspace: Path, tmp_path: Path) -> ToolContext:
    config = make_config(workspace, tmp_path, web_search={"base_url": brave.url},
                         weather={"base_url": owm.url + "/"})  # fmt: skip
    env = {"BRAVE_API_KEY": "b-key", "OPENWEATHER_API_KEY": "w-key"}
    return ToolContext(user_id="u", services=Services(config=config, environ=env))


async def test_web_search_speaks_the_brave_api(registry, web_ctx, brave) -> None:
    brave.results["nerve gateway"] = [("Nerve", "https://nerve.dev/", "A gateway.")]
    result = await registry.execute("web_search", '{"query": "nerve gateway", "count": 3}', web_ctx)
    assert result.ok, result
    assert result.content == {
        "query": "nerve gateway",
        "results": [{"title": "Nerve", "url": "https://nerve.dev/", "description": "A gateway."}],
    }
    seen = brave.requests[-1]
    assert (seen.method, seen.path) == ("GET", "/res/v1/web/search")
    assert seen.query == {"q": "nerve gateway", "count": "3"}
    assert seen.headers["X-Subscription-Token"] == "b-key"


async def test_web_search_count_defaults_to_five_and_is_bounded(registry, web_ctx) -> None:
    result = await registry.execute("web_search", {"query": "cats"}, web_ctx)
    assert len(result.content["results"]) == 5
    too_many = await registry.execute("web_search", {"query": "cats", "count": 50}, web_ctx)
    assert not too_many.ok and "'count'" in (too_many.error or "")


async def test_brave_errors_and_missing_keys_are_error_results(registry, web_ctx) -> None:
    web_ctx.services.environ = {"BRAVE_API_KEY": "wrong"}
    bad = await registry.execute("web_search", {"query": "x"}, web_ctx)
    assert bad.error == "Brave Search answered 401: The provided subscription token is invalid."
    web_ctx.services.environ = {}
    missing = await registry.execute("web_search", {"query": "x"}, web_ctx)
    assert (
        missing.error == "web_search is not configured: set the BRAVE_API_KEY environment variable"
    )


async def test_weather_speaks_the_openweathermap_api_in_metric(registry, web_ctx, owm) -> None:
    result = await registry.execute("weather", '{"location": "London"}', web_ctx)
    assert result.ok, result
    assert result.content == {
        "location": "London, GB", "description": "light rain", "temperature_c": 12.4,
        "feels_like_c": 11.6, "humidity_percent": 81, "wind_speed_ms": 4.6,
    }  # fmt: skip
    seen = owm.requests[-1]
    assert (seen.method, seen.path) == ("GET", "/data/2.5/weather")
    assert seen.query == {"q": "London", "appid": "w-key", "units": "metric"}


async def test_weather_errors_never_leak_the_key(registry, web_ctx) -> None:
    unknown = await registry.execute("weather", {"location": "Atlantis"}, web_ctx)
    assert unknown.error == "OpenWeatherMap answered 404: city not found"
    web_ctx.services.environ = {"OPENWEATHER_API_KEY": "leaky-secret"}
    bad = await registry.execute("weather", {"location": "Paris"}, web_ctx)
    assert bad.error is not None and bad.error.startswith("OpenWeatherMap answered 401")
    assert "leaky-secret" not in bad.for_model()
    web_ctx.services.environ = {}
    missing = await registry.execute("weather", {"location": "Paris"}, web_ctx)
    assert "set the OPENWEATHER_API_KEY environment variable" in (missing.error or "")


async def test_an_unreachable_api_is_an_error_result(registry, web_ctx, owm) -> None:
    owm.stop()
    result = await registry.execute("weather", {"location": "Paris"}, web_ctx)
    assert result.error == "OpenWeatherMap could not be reached (ClientConnectorError)"


async def test_the_servers_shared_session_is_used_when_given(registry, web_ctx, owm) -> None:
    async with aiohttp.ClientSession() as session:
        web_ctx.services.http = session
        result = await registry.execute("weather", {"location": "tokyo,JP"}, web_ctx)
        assert not session.closed
    assert result.ok and result.content["location"] == "Tokyo, JP"
    assert json.loads(result.for_model())["temperature_c"] == 24.2
