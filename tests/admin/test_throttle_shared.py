"""AD-2 with GW-19: workers sharing Redis share one count of failed admin logins."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from nerve.config import load_config
from nerve.gateway.resilience import ManualClock
from nerve.server import NerveApp, build_app
from tests.admin.conftest import PASSWORD
from tests.gateway.conftest import redis_prefix, redis_url  # noqa: F401  (fixtures)

CONFIG = """\
routes:
  - name: default
    model: {{provider: p, model: m}}
providers:
  - {{name: p, base_url: "http://127.0.0.1:9/v1"}}
memory: {{enabled: false}}
probes: {{interval_seconds: 0}}
server: {{config_poll_seconds: 0}}
redis: {{url: "{url}", key_prefix: "{prefix}"}}
"""


@contextlib.asynccontextmanager
async def worker(path: Path, clock: ManualClock) -> AsyncIterator[httpx.AsyncClient]:
    """One worker process's app (they share the config file, .nerve/ and Redis)."""
    app: NerveApp = build_app(load_config(str(path)), clock=clock, config_path=path)
    async with app.api.router.lifespan_context(app.api):
        transport = httpx.ASGITransport(app=app, client=("127.0.0.9", 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as c:
            yield c


async def login(client: httpx.AsyncClient, password: str) -> int:
    return (await client.post("/admin/api/login", json={"password": password})).status_code


async def test_failed_logins_on_one_worker_count_on_the_other(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    clock: ManualClock,
    redis_url: str,  # noqa: F811
    redis_prefix: str,  # noqa: F811
) -> None:
    monkeypatch.setenv("NERVE_ADMIN_PASSWORD", PASSWORD)
    path = tmp_path / "nerve.yaml"
    path.write_text(CONFIG.format(url=redis_url, prefix=redis_prefix))
    async with worker(path, clock) as a, worker(path, clock) as b:
        for client in (a, b, a, b, a):
            assert await login(client, "nope") == 401
        assert await login(b, "nope") == 429  # the sixth try within a minute, wherever it lands
        clock.advance(61)
        for client in (b, a, b, a, b):
            assert await login(client, "nope") == 401
        assert await login(a, PASSWORD) == 429  # ten failures: banned on every worker
        assert await login(b, PASSWORD) == 429
        clock.advance(30 * 60 + 1)
        assert await login(b, PASSWORD) == 200
