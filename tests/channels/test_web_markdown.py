"""The web chat renders the assistant's Markdown as DOM nodes, never HTML: bold, code blocks,
lists and safe links show; an `<img onerror>` in a reply is text, and nothing of it runs. An
empty chat opens with a greeting that says what the assistant can do; a reply shows as the model
writes it, then whole and rendered. Headless Chromium."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.browser import chromium, require_chromium
from tests.channels.conftest import ChatServer
from tests.fakes.upstream import FakeUpstream, Reply

WAIT_MS = 15_000
REPLY = """Here is **the plan**, with `nerve serve`:

1. install it
2. run it

```python
print("hi")
```

- a [safe link](https://example.com/docs)
- a [bad link](javascript:window.pwned=2)

<img src=x onerror="window.pwned=1"> <script>window.pwned=3</script>"""

require_chromium()


def test_markdown_renders_and_html_in_a_reply_stays_text(
    chat_server: ChatServer, upstream: FakeUpstream
) -> None:
    upstream.script(Reply(text=REPLY))
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 420, "height": 800})
        page.goto(f"{chat_server.url}/chat?user=asha")
        greeting = page.locator(".greeting")
        expect(greeting).to_contain_text("nerve's assistant", timeout=WAIT_MS)
        expect(greeting.locator("li")).to_have_count(5)
        expect(page.locator("#status")).to_have_text("online", timeout=WAIT_MS)
        page.fill("#input", "how do I start?")
        page.keyboard.press("Enter")
        reply = page.locator(".msg.assistant")
        expect(reply).to_be_visible(timeout=WAIT_MS)
        expect(greeting).to_have_count(0)
        expect(reply.locator("strong")).to_have_text("the plan")
        expect(reply.locator("p code")).to_have_text("nerve serve")
        expect(reply.locator("ol li")).to_have_text(["install it", "run it"])
        expect(reply.locator("pre code")).to_have_text('print("hi")')
        expect(reply.locator("a")).to_have_count(1)
        expect(reply.locator("a")).to_have_attribute("href", "https://example.com/docs")
        expect(reply).to_contain_text("[bad link](javascript:window.pwned=2)")
        expect(reply).to_contain_text('<img src=x onerror="window.pwned=1">')
        assert page.locator(".msg img, .msg script").count() == 0
        assert page.evaluate("window.pwned") is None


def test_the_reply_shows_as_it_is_written_then_renders_whole(
    chat_server: ChatServer, upstream: FakeUpstream
) -> None:
    # The stream holds after two chunks until the test releases it: what shows meanwhile is
    # the part written so far, as plain text; the whole reply then replaces it, rendered.
    upstream.script(Reply(chunks=["Hello, ", "**Asha**", "! Done."], gate_after=2))
    try:
        with chromium() as browser:
            page = browser.new_page()
            page.goto(f"{chat_server.url}/chat?user=asha")
            expect(page.locator("#status")).to_have_text("online", timeout=WAIT_MS)
            page.fill("#input", "hi")
            page.keyboard.press("Enter")
            live = page.locator(".msg.assistant.live")
            expect(live).to_have_text("Hello, **Asha**", timeout=WAIT_MS)
            upstream.release()
            reply = page.locator(".msg.assistant")
            expect(reply).to_have_count(1, timeout=WAIT_MS)
            expect(live).to_have_count(0)
            expect(reply.locator("strong")).to_have_text("Asha")
            expect(reply).to_have_text("Hello, Asha! Done.")
    finally:
        upstream.release()
