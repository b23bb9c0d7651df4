"""The dashboard's charts over time in a real browser: headless Chromium against nerve on a real
socket. Traffic is spread over minutes with the ManualClock (no sleeps); the SVG charts show its
points, switch window (1 h / 24 h) and split (route / model), and stay readable at 420 px wide.
Screenshots go to $NERVE_SCREENSHOTS (else the test's tmp_path)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from nerve.gateway.resilience import ManualClock
from nerve.secrets import generate_key
from tests.admin.test_browser import WAIT_MS, chat, log_in, start_admin
from tests.browser import chromium, require_chromium
from tests.fakes.upstream import FakeUpstream, Reply

USAGE = {"prompt_tokens": 8, "completion_tokens": 4, "total_tokens": 12}

require_chromium()


@pytest.fixture
def clock() -> ManualClock:
    # The page shows wall-clock times: start 40 min ago, so the traffic ends about now.
    return ManualClock(start=time.time() // 60 * 60 + 5 - 40 * 60)


def points(page: Page, chart: str) -> int:
    return page.locator(f"#chart-{chart} svg circle.point").count()


def test_the_dashboard_charts_traffic_over_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clock: ManualClock, upstream: FakeUpstream
) -> None:
    monkeypatch.setenv("NERVE_MASTER_KEY", generate_key())
    server, _ = start_admin(tmp_path, monkeypatch, clock, upstream)
    shots = Path(os.environ.get("NERVE_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    try:
        # Traffic over the last 40 minutes: two routes (default, and "explicit" naming the
        # model), two models, some errors; the clock ends at "now".
        for minute in range(8):
            n = 1 + minute % 3
            upstream.script(*[Reply(usage=USAGE, delay=0.002 * (1 + minute))] * n)
            for _ in range(n):
                assert chat(server).status_code == 200
            upstream.script(Reply(usage=USAGE))
            assert chat(server, model="primary/m2").status_code == 200
            if minute % 4 == 3:
                upstream.script(Reply(status=500))
                assert chat(server).status_code == 502
            clock.advance(5 * 60)
        with chromium() as browser:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            log_in(page, server.url)
            for chart in ("requests", "errors", "latency", "tokens", "cost"):
                expect(page.locator(f"#chart-{chart} svg")).to_be_visible(timeout=WAIT_MS)
            page.wait_for_function(
                "() => document.querySelectorAll('#chart-requests circle.point').length >= 8",
                timeout=WAIT_MS,
            )
            # by route: "default", "explicit" and their total, one line each
            requests = page.locator("#chart-requests svg path.line")
            names = {requests.nth(i).get_attribute("data-name") for i in range(requests.count())}
            assert names == {"total", "default", "explicit"}
            assert points(page, "errors") >= 2 and points(page, "latency") >= 8
            expect(page.locator("#chart-legend")).to_contain_text("explicit")
            expect(page.locator("#chart-note")).to_contain_text("One point per 1 minute")
            page.screenshot(path=str(shots / "admin-charts-1h.png"), full_page=True)

            page.click("button[data-by=model]")
            expect(page.locator("#chart-legend")).to_contain_text("primary/m2", timeout=WAIT_MS)
            expect(page.locator("button[data-by=model]")).to_have_class("active")

            page.click("button[data-window='24h']")
            expect(page.locator("#chart-note")).to_contain_text("15 minutes", timeout=WAIT_MS)
            requests_24h = page.locator("#chart-requests svg circle.point")
            # 8 busy minutes, 5 minutes apart, in about 3 quarter-hours: fewer, fuller points
            assert 2 <= requests_24h.count() // 3 <= 4
            page.screenshot(path=str(shots / "admin-charts-24h.png"), full_page=True)

            # A phone: every chart fits the 420 px page, no sideways scrolling for them.
            page.set_viewport_size({"width": 420, "height": 900})
            page.click("button[data-window='1h']")
            expect(page.locator("#chart-note")).to_contain_text("1 minute", timeout=WAIT_MS)
            page.wait_for_function(
                "() => [...document.querySelectorAll('.chart svg')].every("
                "s => s.getBoundingClientRect().right <= 420)",
                timeout=WAIT_MS,
            )
            box = page.locator("#chart-latency svg").bounding_box()
            assert box is not None and 300 <= box["width"] <= 420
            tick = page.locator("#chart-requests svg text.tick").first
            assert float(tick.evaluate("e => e.getBoundingClientRect().height")) >= 9
            page.locator("#charts").scroll_into_view_if_needed()
            page.screenshot(path=str(shots / "admin-charts-420.png"), full_page=True)
    finally:
        server.stop()
