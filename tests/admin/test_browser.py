"""The admin page in a real browser (SPEC AD-1, AD-2, AD-4): headless Chromium driven by
Playwright against nerve served by uvicorn on a real socket, with a fake upstream behind it.

Needs Debian's `chromium` at /usr/bin/chromium (`.ci/run` installs it); without it the test is
skipped, unless CI=true, where it fails. Sync on purpose: Playwright's sync API cannot run
inside an event loop.
"""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from nerve.config import load_config
from nerve.gateway.resilience import ManualClock
from nerve.secrets import generate_key
from nerve.server import build_app
from tests.browser import chromium, require_chromium
from tests.conftest import RunningServer
from tests.fakes.upstream import FakeUpstream, Reply

PASSWORD = "browser-test-password"
SECRET = "sk-browser-secret-4242"
ROTATED = "sk-browser-rotated-9090"
CONFIG = """\
# routes are edited from the admin page in this test
providers:
  - name: primary
    base_url: {url}
    api_key: {key}
routes:
  - name: default
    model: {{provider: primary, model: m1}}
memory: {{enabled: false}}
probes: {{interval_seconds: 0}}
server: {{config_poll_seconds: 0}}
"""
USAGE = {"prompt_tokens": 8, "completion_tokens": 4, "total_tokens": 12}
WAIT_MS = 15_000

require_chromium()


def chat(server: RunningServer, model: str = "auto") -> httpx.Response:
    body = {"model": model, "messages": [{"role": "user", "content": "hello there"}]}
    return httpx.post(f"{server.url}/v1/chat/completions", json=body, timeout=10)


def log_in(page: Page, url: str) -> None:
    page.goto(f"{url}/admin")
    page.fill("#password", "not the password")
    page.click("#login-button")
    expect(page.locator("#login-error")).to_contain_text("wrong password", timeout=WAIT_MS)
    page.fill("#password", PASSWORD)
    page.click("#login-button")
    expect(page.locator("#app")).to_be_visible(timeout=WAIT_MS)


def start_admin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clock: ManualClock, upstream: FakeUpstream
) -> tuple[RunningServer, Path]:
    """nerve on a real socket with CONFIG (in tmp_path) and PASSWORD; the caller stops it."""
    monkeypatch.setenv("NERVE_ADMIN_PASSWORD", PASSWORD)
    path = tmp_path / "nerve.yaml"
    path.write_text(CONFIG.format(url=upstream.openai_base_url, key=SECRET))
    server = RunningServer(build_app(load_config(str(path)), clock=clock, config_path=path))
    return server.start(), path


def test_log_in_watch_traffic_and_edit_a_route_in_the_browser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clock: ManualClock, upstream: FakeUpstream
) -> None:
    monkeypatch.setenv("NERVE_MASTER_KEY", generate_key())
    server, path = start_admin(tmp_path, monkeypatch, clock, upstream)
    shots = Path(os.environ.get("NERVE_SCREENSHOTS") or tmp_path)
    try:
        with chromium() as browser:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            log_in(page, server.url)
            cookie = next(c for c in page.context.cookies() if c["name"] == "nerve_admin")
            assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
            expect(page.locator("#calls")).to_have_text("0", timeout=WAIT_MS)
            expect(page.locator("#routes tr[data-route=default]")).to_contain_text("primary/m1")

            # AD-1: the dashboard follows the traffic without a reload of the page.
            upstream.script(Reply(usage=USAGE), Reply(usage=USAGE), Reply(status=500))
            assert chat(server).status_code == 200 and chat(server).status_code == 200
            assert chat(server).status_code == 502
            expect(page.locator("#calls")).to_have_text("3", timeout=WAIT_MS)
            expect(page.locator("#tokens")).to_have_text("24", timeout=WAIT_MS)
            expect(page.locator("#errors")).to_have_text("1", timeout=WAIT_MS)
            # No price for primary/m1 in the config: "no price", not a $0.0000 that reads free.
            expect(page.locator("#cost")).to_have_text("no price")
            expect(page.locator("#routes tr[data-route=default] td").last).to_have_text("no price")
            expect(page.locator("#health-reasons")).to_be_hidden()
            page.screenshot(path=str(shots / "admin-dashboard.png"), full_page=True)

            # AD-4: colour-coded logs, filterable by kind.
            page.click("button[data-tab=logs]")
            error = page.locator("#log-list li[data-kind=ERROR]").first
            expect(error).to_contain_text("upstream answered 500", timeout=WAIT_MS)
            assert error.evaluate("e => getComputedStyle(e).color") == "rgb(192, 38, 45)"
            expect(page.locator("#log-list li[data-kind=CALL]")).to_have_count(2)
            page.locator("#log-kinds label.kind-CALL input").uncheck()
            expect(page.locator("#log-list li[data-kind=CALL]")).to_have_count(0)
            expect(page.locator("#log-list li[data-kind=ERROR]")).to_have_count(1)
            page.screenshot(path=str(shots / "admin-logs.png"), full_page=True)

            # AD-1: keys are shown masked; one is rotated from the page, stored encrypted.
            page.click("button[data-tab=keys]")
            row = page.locator("#keys tr[data-provider=primary]")
            expect(row).to_contain_text("…4242", timeout=WAIT_MS)
            expect(row).to_contain_text("literal")
            page.fill("#key-value", ROTATED)
            page.click("#key-form button[type=submit]")
            expect(page.locator("#key-message")).to_contain_text("saved encrypted", timeout=WAIT_MS)
            expect(row).to_contain_text("encrypted", timeout=WAIT_MS)
            expect(row).to_contain_text("…9090")
            assert ROTATED not in path.read_text() and SECRET not in path.read_text()
            page.screenshot(path=str(shots / "admin-keys.png"), full_page=True)

            # AD-1: the config editor shows no key; a route edit is validated and applied.
            page.click("button[data-tab=config]")
            editor = page.locator("#config-text")
            page.wait_for_function(
                "() => document.querySelector('#config-text').value.includes('<masked:')",
                timeout=WAIT_MS,
            )
            text = editor.input_value()
            assert SECRET not in text and "# routes are edited" in text
            editor.fill(text.replace("provider: primary, model: m1", "provider: nosuch, model: m1"))
            page.click("#config-save")
            expect(page.locator("#config-message")).to_contain_text("nosuch", timeout=WAIT_MS)
            editor.fill(text.replace("model: m1", "model: m2"))
            page.click("#config-save")
            expect(page.locator("#config-message")).to_contain_text("Saved", timeout=WAIT_MS)
            page.screenshot(path=str(shots / "admin-config.png"), full_page=True)

            upstream.script(Reply(usage=USAGE))
            served = chat(server)
            assert served.status_code == 200 and served.headers["x-nerve-model"] == "m2"
            assert upstream.requests[-1].headers["authorization"] == f"Bearer {ROTATED}"
            assert "enc:" in path.read_text() and "model: m2" in path.read_text()
            page.click("button[data-tab=dashboard]")
            expect(page.locator("#routes tr[data-route=default]")).to_contain_text(
                "primary/m2", timeout=WAIT_MS
            )

            # A request naming provider/model has its row, so the table adds up to the totals.
            upstream.script(Reply(usage=USAGE))
            assert chat(server, model="primary/m1").status_code == 200
            explicit = page.locator("#routes tr[data-route=explicit]")
            expect(explicit).to_contain_text("named by the client", timeout=WAIT_MS)
            expect(explicit.locator("td.num").first).to_have_text("1")
            expect(page.locator("#calls")).to_have_text("5")
    finally:
        server.stop()
