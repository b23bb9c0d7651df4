"""/docs works with no network: Swagger UI's files come from the package, not a CDN; every page
has nerve's favicon. Checked in headless Chromium with every request off loopback refused."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import Route, expect

from nerve.server import build_app
from tests.browser import chromium, require_chromium
from tests.conftest import RunningServer, make_config
from tests.fakes.upstream import FakeUpstream

require_chromium()


@pytest.fixture
def server(upstream: FakeUpstream) -> Iterator[RunningServer]:
    config = make_config(
        {"primary": upstream},
        server={"config_poll_seconds": 0, "api_keys": [{"name": "ops", "key": "sk-docs-test"}]},
        probes={"interval_seconds": 0},
    )
    running = RunningServer(build_app(config)).start()
    yield running
    running.stop()


def test_the_docs_page_renders_offline_with_the_packaged_swagger_ui(server: RunningServer) -> None:
    asked: list[str] = []

    def only_loopback(route: Route) -> None:
        asked.append(route.request.url)
        if urlsplit(route.request.url).hostname == "127.0.0.1":
            route.continue_()
        else:
            route.abort()  # a CDN would be here: the page must not need one

    with chromium() as browser:
        page = browser.new_page()
        page.route("**/*", only_loopback)
        page.goto(f"{server.url}/docs")
        expect(page.locator(".swagger-ui .info .title")).to_contain_text("nerve", timeout=15_000)
        expect(page.locator("[data-path='/api/process']").first).to_be_visible()
    hosts = {urlsplit(url).hostname for url in asked}
    assert hosts == {"127.0.0.1"}, asked
    assert any(url.endswith("/docs/static/swagger-ui-bundle.js") for url in asked)


def test_docs_assets_and_favicon_need_no_key(server: RunningServer) -> None:
    # The server has keys: the API needs one, its documentation and icon do not.
    assert httpx.get(f"{server.url}/api/agents").status_code == 401
    js = httpx.get(f"{server.url}/docs/static/swagger-ui-bundle.js")
    assert js.status_code == 200 and "SwaggerUIBundle" in js.text
    icon = httpx.get(f"{server.url}/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"] == "image/png"
    assert icon.content.startswith(b"\x89PNG\r\n\x1a\n")
    missing = httpx.get(f"{server.url}/docs/static/no-such-file.js")
    assert missing.status_code == 404
