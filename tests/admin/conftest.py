"""Admin fixtures: a NerveApp built from a real config file, its lifespan running, and httpx
clients that reach it in process from a chosen address and scheme; `backend`/`storage_url`
(tests/memory/conftest.py) for the tests of the stores on SQLite and PostgreSQL."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from nerve.config import load_config
from nerve.events import JsonlFile
from nerve.gateway.resilience import ManualClock
from nerve.secrets import encrypt, generate_key
from nerve.server import NerveApp, build_app
from tests.fakes.upstream import FakeUpstream
from tests.memory.conftest import backend, postgres_schema, storage_url  # noqa: F401 - fixtures

PASSWORD = "correct horse battery staple"
LITERAL_KEY = "sk-secret-123"
VAULT_KEY = "sk-vault-key-456789"
CONFIG = """\
# nerve test config: this comment must survive edits made in the admin panel
providers:
  - name: primary        # a literal key
    base_url: {url}
    api_key: {literal}
  - {{name: vault, base_url: "http://127.0.0.1:9/v1", api_key: "{enc}"}}
  - name: fromenv
    base_url: http://127.0.0.1:9/v1
    api_key: ${{NERVE_TEST_KEY}}
routes:
  - name: default
    model: {{provider: primary, model: m1}}
memory: {{enabled: false}}
probes: {{interval_seconds: 0}}
server: {{config_poll_seconds: 0}}
"""


@dataclass
class Harness:
    app: NerveApp
    path: Path
    clock: ManualClock

    def client(self, *, ip: str = "127.0.0.1", scheme: str = "http") -> httpx.AsyncClient:
        transport = httpx.ASGITransport(app=self.app, client=(ip, 40000))
        return httpx.AsyncClient(transport=transport, base_url=f"{scheme}://localhost")

    async def login(self, client: httpx.AsyncClient, password: str = PASSWORD) -> httpx.Response:
        return await client.post("/admin/api/login", json={"password": password})

    @contextlib.asynccontextmanager
    async def session(self, **kwargs: str) -> AsyncIterator[httpx.AsyncClient]:
        """A client logged in as admin."""
        async with self.client(**kwargs) as client:
            assert (await self.login(client)).status_code == 200
            yield client

    @property
    def events_file(self) -> Path:
        """The shared JSONL log: beside the SQLite database (storage.url's default here)."""
        sink = self.app.admin.events.sink
        assert isinstance(sink, JsonlFile)
        return sink.path


@pytest.fixture
def master_key(monkeypatch: pytest.MonkeyPatch) -> str:
    key = generate_key()
    monkeypatch.setenv("NERVE_MASTER_KEY", key)
    return key


@pytest.fixture
async def admin(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    clock: ManualClock,
    upstream: FakeUpstream,
    master_key: str,
) -> AsyncIterator[Harness]:
    monkeypatch.setenv("NERVE_ADMIN_PASSWORD", PASSWORD)
    monkeypatch.setenv("NERVE_TEST_KEY", "sk-from-env-000111")
    enc = encrypt(VAULT_KEY, {"NERVE_MASTER_KEY": master_key})
    path = tmp_path / "nerve.yaml"
    path.write_text(CONFIG.format(url=upstream.openai_base_url, literal=LITERAL_KEY, enc=enc))
    app = build_app(load_config(str(path)), clock=clock, config_path=path)
    async with app.api.router.lifespan_context(app.api):
        yield Harness(app, path, clock)
