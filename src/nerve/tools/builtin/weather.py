"""`weather`: current conditions from OpenWeatherMap (GET /data/2.5/weather, $OPENWEATHER_API_KEY).

`assistant.weather.base_url` points it elsewhere (tests: a fake on loopback). Metric units.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from nerve.tools.base import tool
from nerve.tools.builtin._web import api_key, base_url, get_json
from nerve.tools.result import ToolContext, ToolError

__all__ = ["DEFAULT_BASE_URL", "KEY_ENV", "weather"]

DEFAULT_BASE_URL = "https://api.openweathermap.org"
KEY_ENV = "OPENWEATHER_API_KEY"


@tool(description="Current weather for a place (city name, optionally ',country code').")
async def weather(
    ctx: ToolContext,
    location: Annotated[
        str, Field(min_length=1, max_length=200, description="e.g. 'London' or 'Paris,FR'")
    ],
) -> dict[str, Any]:
    key = api_key(ctx, KEY_ENV, "weather")
    base = base_url(ctx.services.config.assistant.weather.base_url, DEFAULT_BASE_URL)
    status, body = await get_json(
        ctx, f"{base}/data/2.5/weather",
        params={"q": location, "appid": key, "units": "metric"},
        headers={"Accept": "application/json"},
        service="OpenWeatherMap",
    )  # fmt: skip
    if status != 200 or not isinstance(body, dict):
        message = body.get("message") if isinstance(body, dict) else None
        raise ToolError(f"OpenWeatherMap answered {status}: {message or 'an unexpected answer'}")
    main = body.get("main") or {}
    wind = body.get("wind") or {}
    sky = (body.get("weather") or [{}])[0]
    country = (body.get("sys") or {}).get("country")
    return {
        "location": ", ".join(x for x in (body.get("name"), country) if x) or location,
        "description": sky.get("description"),
        "temperature_c": main.get("temp"),
        "feels_like_c": main.get("feels_like"),
        "humidity_percent": main.get("humidity"),
        "wind_speed_ms": wind.get("speed"),
    }
