"""The admin page's Access tab in a real browser (SPEC KY-2, UX-1): a key made from the form is
shown once, listed by its last 4 characters, and revoked after a confirmation. Headless
Chromium as in test_browser.py (skipped without it, a failure when CI=true)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import Dialog, expect

from nerve.gateway.resilience import ManualClock
from tests.admin.test_browser import WAIT_MS, log_in, start_admin
from tests.browser import chromium, require_chromium
from tests.fakes.upstream import FakeUpstream

require_chromium()


def test_create_a_key_see_it_once_and_revoke_it_in_the_browser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clock: ManualClock, upstream: FakeUpstream
) -> None:
    server, _ = start_admin(tmp_path, monkeypatch, clock, upstream)
    shots = Path(os.environ.get("NERVE_SCREENSHOTS") or tmp_path)
    try:
        with chromium() as browser:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            log_in(page, server.url)
            page.click("button[data-tab=access]")

            page.fill("#access-name", "ci")
            page.fill("#access-budget", "20/year")
            page.click("#access-form button[type=submit]")
            expect(page.locator("#access-message")).to_contain_text("write USD/PERIOD")
            page.fill("#access-budget", "20/month")
            page.fill("#access-routes", "default")
            page.fill("#access-rpm", "60")
            page.click("#access-form button[type=submit]")
            secret_box = page.locator("#access-secret-value")
            expect(secret_box).to_have_value(re.compile(r"^nrv-[\w-]{43}$"), timeout=WAIT_MS)
            secret = secret_box.input_value()
            row = page.locator("#access-keys tr[data-key=ci]")
            expect(row).to_contain_text(f"…{secret[-4:]}", timeout=WAIT_MS)
            expect(row).to_contain_text("$20/month")
            expect(row).to_contain_text("rpm 60")
            assert secret not in page.locator("#access-keys").inner_text()
            page.screenshot(path=str(shots / "admin-access.png"), full_page=True)
            page.click("#access-secret-done")
            expect(page.locator("#access-secret")).to_be_hidden()
            assert secret_box.input_value() == ""  # gone from the page too

            answers = iter([False, True])  # the first confirmation is dismissed

            def answer(dialog: Dialog) -> None:
                assert 'Revoke the key "ci"' in dialog.message
                dialog.accept() if next(answers) else dialog.dismiss()

            page.on("dialog", answer)
            page.click("#access-keys tr[data-key=ci] button.revoke")
            expect(row.locator("button.revoke")).to_be_visible()
            page.click("#access-keys tr[data-key=ci] button.revoke")
            expect(row).to_contain_text("revoked", timeout=WAIT_MS)
            expect(page.locator("#access-message")).to_contain_text("ci: revoked")
            expect(row.locator("button.revoke")).to_have_count(0)
    finally:
        server.stop()
