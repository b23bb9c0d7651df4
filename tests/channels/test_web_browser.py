"""The web chat page in a real browser (issue 7): headless Chromium types a message and sees
the typing indicator, then the reply from the fake upstream, through nerve on a real socket;
what came while the page was closed shows when it opens (UX-2), a repeated delivery once; with
API keys, the page asks for one when its socket is refused, and again for a wrong one.

Needs Debian's `chromium` at /usr/bin/chromium; without it the test is skipped, unless
CI=true, where it fails. Sync on purpose: Playwright's sync API cannot run inside a loop.
"""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Dialog, expect

from nerve.assistant import Outbound
from nerve.server import build_app
from nerve.tools import ToolContext, tool
from tests.browser import chromium, require_chromium
from tests.channels.conftest import ChatServer, kept, until
from tests.conftest import RunningServer, make_config
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


def test_what_came_while_the_page_was_closed_shows_on_open_and_a_repeat_shows_once(
    chat_server: ChatServer,
) -> None:
    bus = chat_server.bus
    with chromium() as browser:
        page = browser.new_page()
        page.goto(f"{chat_server.url}/chat")
        page.evaluate("localStorage.setItem('nerve-chat-id', 'tab-b1')")  # the page's chat
        page.goto("about:blank")  # closed
        chat_server.server.call(bus.deliver(Outbound("web", "tab-b1", "Kept for you.")))
        until(lambda: len(kept(chat_server, "tab-b1")) == 1, "the message is kept")
        page.goto(f"{chat_server.url}/chat")
        shown = page.locator(".msg.assistant")
        expect(shown).to_have_count(1, timeout=WAIT_MS)
        expect(shown.first).to_contain_text("Kept for you.")
        expect(shown.first.locator(".note")).to_contain_text("sent while you were away")
        for _ in range(2):  # one firing delivered twice (a replica died before recording it)
            tea = Outbound("web", "tab-b1", "⏰ Reminder: tea", id="job-j1-1780000000")
            chat_server.server.call(bus.deliver(tea))
        chat_server.server.call(bus.deliver(Outbound("web", "tab-b1", "After.")))
        expect(shown).to_have_count(3, timeout=WAIT_MS)
        assert shown.all_inner_texts()[1:] == ["⏰ Reminder: tea", "After."]


def test_with_api_keys_the_page_asks_for_a_key_and_asks_again_when_it_is_refused(
    upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keys are wanted on loopback too: the refused socket makes the page ask (window.prompt);
    a wrong key is refused too, forgotten and asked for again; the chat is the key's user's."""
    monkeypatch.setenv("NERVE_ADMIN_PASSWORD", "channel-tests-password")
    bot = "sk-bot-only-ci-bot"
    keys = [{"name": "bot", "key": bot, "users": ["ci-bot"]}]
    config = make_config({"primary": upstream}, probes={"interval_seconds": 0},
                         server={"api_keys": keys, "config_poll_seconds": 0})  # fmt: skip
    server = RunningServer(build_app(config)).start()
    answers, asked = ["sk-wrong", bot], []

    def answer(dialog: Dialog) -> None:
        asked.append(dialog.message)
        dialog.accept(answers.pop(0))

    upstream.script(Reply(text="Hello, bot."))
    try:
        with chromium() as browser:
            page = browser.new_page()
            page.on("dialog", answer)
            page.goto(f"{server.url}/chat")
            expect(page.locator("#status")).to_have_text("online", timeout=WAIT_MS)
            page.fill("#input", "hi from the page")
            page.keyboard.press("Enter")
            expect(page.locator(".msg.assistant")).to_have_text("Hello, bot.", timeout=WAIT_MS)
            assert page.evaluate("sessionStorage.getItem('nerve-key')") == bot
        recalled = httpx.post(
            f"{server.url}/api/memory/recall", json={"user_id": "ci-bot", "kind": "turn"},
            headers={"authorization": f"Bearer {bot}"}, timeout=10,
        ).json()  # fmt: skip
    finally:
        server.stop()
    assert asked == ["API key for this nerve server"] * 2
    assert "hi from the page" in [r["data"]["content"] for r in recalled["records"]]
