"""The web chat page in a real browser (issue 7): headless Chromium types a message and sees
the typing indicator, then the reply from the fake upstream, through nerve on a real socket.

Needs Debian's `chromium` at /usr/bin/chromium; without it the test is skipped, unless
CI=true, where it fails. Sync on purpose: Playwright's sync API cannot run inside a loop.
"""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

from playwright.sync_api import expect

from nerve.tools import ToolContext, tool
from tests.browser import chromium, require_chromium
from tests.channels.conftest import ChatServer
from tests.fakes.upstream import FakeUpstream, Reply

WAIT_MS = 15_000

require_chromium()


def test_type_a_message_see_typing_then_the_reply(
    chat_server: ChatServer, upstream: FakeUpstream, tmp_path: Path
) -> None:
    release = threading.Event()

    @tool(description="Looks the answer up (held until the test lets it finish).")
    async def look_up(ctx: ToolContext, what: str) -> str:
        await asyncio.to_thread(release.wait, 10)
        return f"{what}: 42"

    chat_server.tools.register(look_up)
    upstream.script(
        Reply(
            tool_calls=[{"id": "c1", "function": {"name": "look_up", "arguments": {"what": "x"}}}]
        ),
        Reply(text="The answer is 42."),
    )
    shots = Path(os.environ.get("NERVE_SCREENSHOTS") or tmp_path)
    try:
        with chromium() as browser:
            page = browser.new_page(viewport={"width": 900, "height": 700})
            page.goto(f"{chat_server.url}/chat?user=asha")
            expect(page.locator("#status")).to_have_text("online", timeout=WAIT_MS)
            page.fill("#input", "what is the answer?")
            page.keyboard.press("Enter")
            expect(page.locator(".msg.user")).to_have_text("what is the answer?")
            expect(page.locator("#typing")).to_be_visible(timeout=WAIT_MS)
            release.set()
            expect(page.locator(".msg.assistant")).to_have_text(
                "The answer is 42.", timeout=WAIT_MS
            )
            expect(page.locator("#typing")).to_be_hidden()
            page.screenshot(path=str(shots / "web-chat.png"), full_page=True)
    finally:
        release.set()
    second = upstream.wait_for_requests(2)[1].body
    assert second["messages"][-1]["content"] == '"x: 42"'
    assert second["messages"][1]["content"] == "what is the answer?"
