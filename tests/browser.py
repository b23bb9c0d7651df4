"""Headless Debian Chromium for the page tests, driven by Playwright (never `playwright install`:
it downloads a browser, and this machine has no internet).

    from tests.browser import chromium
    with chromium() as browser: page = browser.new_page(); ...

A test module calls `require_chromium()` at import: without /usr/bin/chromium it is skipped,
naming the Debian package, except in CI (`CI=true`), where that is a failure.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, sync_playwright

CHROMIUM = Path("/usr/bin/chromium")
# Without the background-networking flags Chromium keeps calling home on a closed network.
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-sync",
        "--disable-component-update", "--no-first-run", "--disable-quic"]  # fmt: skip


def require_chromium() -> None:
    if CHROMIUM.exists():
        return
    message = "needs Chromium at /usr/bin/chromium: apt-get install chromium (Debian package)"
    if os.environ.get("CI") == "true":
        pytest.fail(message, pytrace=False)
    pytest.skip(message, allow_module_level=True)


@contextlib.contextmanager
def chromium() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield browser
        finally:
            browser.close()
