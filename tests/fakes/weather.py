"""A fake OpenWeatherMap current-weather API on loopback (GET /data/2.5/weather), its wire format.

`appid` is checked (401 with OWM's message otherwise), an unknown city answers 404 `city not
found` (with `cod` as a string, as OWM does), and units follow the `units` parameter: without
`units=metric` temperatures are Kelvin, as the real API's default.
"""

from __future__ import annotations

import time
from typing import Any

from aiohttp import web

from tests.fakes.loopback import Loopback

__all__ = ["FakeWeather"]

# name → (country, lat, lon, °C, feels-like °C, humidity %, wind m/s, description)
CITIES: dict[str, tuple[str, float, float, float, float, int, float, str]] = {
    "london": ("GB", 51.5085, -0.1257, 12.4, 11.6, 81, 4.6, "light rain"),
    "paris": ("FR", 48.8534, 2.3488, 17.0, 16.5, 60, 3.1, "clear sky"),
    "tokyo": ("JP", 35.6895, 139.6917, 24.2, 24.8, 70, 2.2, "few clouds"),
}


class FakeWeather(Loopback):
    name = "openweathermap"

    def __init__(self, key: str = "owm-test-key") -> None:
        super().__init__()
        self.key = key

    def routes(self, app: web.Application) -> None:
        app.router.add_get("/data/2.5/weather", self._current)

    async def _current(self, request: web.Request) -> web.Response:
        self.seen(request)
        if request.query.get("appid") != self.key:
            return web.json_response({"cod": 401, "message": "Invalid API key. Please see "
                                      "https://openweathermap.org/faq#error401 for more info."},
                                     status=401)  # fmt: skip
        q = request.query.get("q", "")
        if not q:
            return web.json_response({"cod": "400", "message": "Nothing to geocode"}, status=400)
        city = q.split(",")[0].strip()
        row = CITIES.get(city.lower())
        if row is None:
            return web.json_response({"cod": "404", "message": "city not found"}, status=404)
        country, lat, lon, temp, feels, humidity, wind, description = row
        metric = request.query.get("units") == "metric"

        def t(c: float) -> float:
            return c if metric else round(c + 273.15, 2)

        body: dict[str, Any] = {
            "coord": {"lon": lon, "lat": lat},
            "weather": [{"id": 500, "main": description.split()[-1].title(),
                         "description": description, "icon": "10d"}],
            "base": "stations",
            "main": {"temp": t(temp), "feels_like": t(feels), "temp_min": t(temp - 1),
                     "temp_max": t(temp + 1), "pressure": 1012, "humidity": humidity,
                     "sea_level": 1012, "grnd_level": 1008},
            "visibility": 10000,
            "wind": {"speed": wind, "deg": 240},
            "clouds": {"all": 75},
            "dt": int(time.time()),
            "sys": {"type": 2, "id": 2075535, "country": country, "sunrise": 1726636384,
                    "sunset": 1726680975},
            "timezone": 3600,
            "id": 2643743,
            "name": city.title(),
            "cod": 200,
        }  # fmt: skip
        return web.json_response(body)
