"""The Memory, Safety, Agents and Jobs pages in a real browser at a phone's 420 px: what each
shows, deleting and cancelling after a confirmation, and nothing wider than the screen.
Headless Chromium as in test_browser.py (skipped without it, a failure when CI=true); a
screenshot of each page goes to $NERVE_SCREENSHOTS (or the test's tmp_path)."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Dialog, Page, expect

from nerve.agents.model import Agent
from nerve.assistant.jobs.scheduler import Scheduler
from nerve.assistant.jobs.store import Job, JobStore
from nerve.config import load_config
from nerve.gateway.resilience import ManualClock
from nerve.server import build_app
from tests.admin.test_browser import CONFIG, PASSWORD, SECRET, WAIT_MS, log_in, start_admin
from tests.agents.fake_agent import FakeAgent
from tests.browser import chromium, require_chromium
from tests.conftest import RunningServer
from tests.fakes.upstream import FakeUpstream

require_chromium()
PHONE = {"width": 420, "height": 900}


@pytest.fixture
def server(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    clock: ManualClock,
    upstream: FakeUpstream,
    caplog: pytest.LogCaptureFixture,
) -> Iterator[RunningServer]:
    """nerve with memory on, on a real socket, with a user's memories, two jobs, a delivered
    one, two agents and their routes, and a verdict of the pipeline."""
    caplog.set_level(logging.INFO, logger="nerve")  # as `nerve serve` logs: records are kept
    monkeypatch.setenv("NERVE_ADMIN_PASSWORD", PASSWORD)
    path = tmp_path / "nerve.yaml"
    text = CONFIG.format(url=upstream.openai_base_url, key=SECRET)
    path.write_text(text.replace("memory: {enabled: false}", "memory: {enabled: true}"))
    running = RunningServer(build_app(load_config(str(path)), clock=clock, config_path=path))
    running.start()
    try:
        running.call(seed(running))
        yield running
    finally:
        running.stop()


async def seed(server: RunningServer) -> None:
    app = server.app
    memory = app.memory
    await memory.store_memory(
        "ann",
        tier="episodic",
        intent="preference",
        data={"text": "ann likes strong coffee"},
        importance=0.8,
    )
    await memory.record_event("ann", "s1", "eye_read", {"path": "/docs/pricing.md"}, 0.7)
    await memory.store_fact("ann", "ann", "city", "Lisbon", 0.9)
    assert app.assistant.jobs is not None
    scheduler = app.assistant.jobs.scheduler
    await scheduler.add("ann", "discord", "c1", "stand-up notes", cron="0 9 * * 1-5")
    now = time.time()  # a reminder due an hour ago that no open tab could take: late
    await scheduler.store.insert(
        Job(
            "late0000001",
            "bob",
            "web",
            "tab-1",
            "water the plants",
            "notify",
            None,
            now - 3600,
            now - 3600,
            None,
            now - 7200,
        )
    )
    await app.agents.store.upsert(
        Agent("coder", "http://127.0.0.1:9/run", ("code", "review"), now, now)
    )
    logging.getLogger("nerve.agents").warning(  # as AgentRegistry.route logs a failed route
        "agent %s failed task %s: %s", "coder", "review", "connection refused"
    )
    with FakeAgent("helper") as fake:
        await app.agents.register("helper", f"{fake.url}/echo", ["summarize"])
        assert (await app.agents.route("helper", "summarize", {"text": "long"}))["success"]
    await app.pipeline.process("hello there", "dee")  # an allowed verdict, on record
    await deliver_one(scheduler.store, now)


async def deliver_one(store: JobStore, now: float) -> None:
    """A reminder delivered late by another replica (this server has no chat open)."""

    async def shown(job: Job, late: str | None) -> bool:
        return True

    due = now - 600
    await store.insert(Job("done0000001", "cy", "web", "tab-2", "call the bank", "notify", None,
                           due, due, None, due - 60))  # fmt: skip
    replica = Scheduler(store, shown, can_deliver=lambda channel, chat_id: chat_id == "tab-2")
    assert await replica.tick(now) == 1


def fits(page: Page) -> None:
    """Readable at 420 px: nothing makes the page scroll sideways."""
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]


def answer_dialogs(page: Page, answers: list[tuple[str, bool]]) -> None:
    """Each confirmation in turn must contain the text given, and is accepted or dismissed."""
    queue = iter(answers)

    def answer(dialog: Dialog) -> None:
        expected, accept = next(queue)
        assert expected in dialog.message, dialog.message
        dialog.accept() if accept else dialog.dismiss()

    page.on("dialog", answer)


def test_memory_safety_agents_and_jobs_pages_at_420px(
    server: RunningServer, tmp_path: Path
) -> None:
    shots = Path(os.environ.get("NERVE_SCREENSHOTS") or tmp_path)
    with chromium() as browser:
        page = browser.new_page(viewport=PHONE)
        log_in(page, server.url)
        answer_dialogs(
            page,
            [
                ("Delete this memory of ann", False),
                ("Delete this memory", True),
                ('Delete EVERYTHING nerve remembers about "ann"', True),
                ('Cancel the cron job "stand-up notes"', True),
            ],
        )

        page.click("button[data-tab=memory]")
        expect(page.locator("#memory-kind option[value=fact]")).to_have_count(1, timeout=WAIT_MS)
        page.fill("#memory-user", "ann")
        page.fill("#memory-query", "coffee")
        page.click("#memory-form button[type=submit]")
        records = page.locator("#memory-records li")
        expect(page.locator("#memory-count")).to_have_text("1", timeout=WAIT_MS)
        expect(page.locator("#memory-context")).to_contain_text("Lisbon")
        expect(page.locator("#memory-context")).to_contain_text("coffee")
        page.fill("#memory-query", "")
        page.click("#memory-form button[type=submit]")
        expect(records).to_have_count(3, timeout=WAIT_MS)
        page.select_option("#memory-kind", "fact")
        expect(records).to_have_count(1, timeout=WAIT_MS)
        expect(records.first).to_contain_text("Lisbon")
        page.select_option("#memory-kind", "")
        expect(records).to_have_count(3, timeout=WAIT_MS)
        fits(page)
        page.screenshot(path=str(shots / "admin-memory.png"), full_page=True)
        coffee = page.locator("#memory-records li", has_text="strong coffee")
        coffee.locator("button.forget").click()  # dismissed: still there
        expect(records).to_have_count(3)
        coffee.locator("button.forget").click()
        expect(records).to_have_count(2, timeout=WAIT_MS)
        expect(page.locator("#memory-message")).to_contain_text("deleted")
        page.click("#memory-forget-user")
        expect(page.locator("#memory-message")).to_contain_text(
            "ann: 2 record(s) deleted", timeout=WAIT_MS
        )
        expect(records).to_have_count(0)

        page.click("button[data-tab=safety]")
        page.select_option("#safety-kind", "shell")
        page.fill("#safety-content", "rm -rf /")
        page.click("#safety-form button[type=submit]")
        result = page.locator("#safety-result")
        expect(result).to_contain_text("blocked", timeout=WAIT_MS)
        page.fill("#safety-content", "ls -la")
        page.click("#safety-form button[type=submit]")
        expect(result).to_contain_text("allowed", timeout=WAIT_MS)
        verdicts = page.locator("#verdicts li")
        expect(verdicts).to_have_count(3, timeout=WAIT_MS)
        processed = page.locator("#verdicts li[data-source=pipeline]")
        expect(processed).to_contain_text("hello there")
        expect(processed).to_contain_text("/api/process")
        expect(processed).to_contain_text("user dee")
        page.select_option("#verdict-allowed", "false")
        expect(verdicts).to_have_count(1, timeout=WAIT_MS)
        expect(verdicts.first).to_contain_text("rm -rf /")
        page.select_option("#verdict-allowed", "true")
        page.select_option("#verdict-kind", "text")
        expect(verdicts).to_have_count(1, timeout=WAIT_MS)
        expect(verdicts.first).to_contain_text("hello there")
        fits(page)
        page.screenshot(path=str(shots / "admin-safety.png"), full_page=True)

        page.click("button[data-tab=agents]")
        agent = page.locator("#agents li[data-agent=coder]")
        expect(agent).to_contain_text("http://127.0.0.1:9/run", timeout=WAIT_MS)
        expect(agent).to_contain_text("review")
        expect(agent).to_contain_text("1 recent failure(s)")
        failure = page.locator("#agent-failures li[data-agent=coder]")
        expect(failure).to_contain_text("connection refused")
        helper = page.locator("#agents li[data-agent=helper]")
        expect(helper).to_contain_text("1 ok")
        expect(helper).to_contain_text("last route")
        expect(helper).to_contain_text("summarize: ok in")
        success = page.locator("#agent-failures li[data-agent=helper][data-ok=true]")
        expect(success).to_contain_text("summarize")
        expect(page.locator("#tab-agents h2")).to_have_text("Recent route results")
        fits(page)
        page.screenshot(path=str(shots / "admin-agents.png"), full_page=True)

        page.click("button[data-tab=jobs]")
        late = page.locator("#jobs [data-channel=web] li[data-state=late]")
        expect(late).to_contain_text("water the plants", timeout=WAIT_MS)
        cron = page.locator("#jobs [data-channel=discord] li", has_text="stand-up notes")
        expect(cron).to_contain_text("cron 0 9 * * 1-5")
        expect(late).to_contain_text("1 h overdue")
        delivered = page.locator("#jobs-delivered li[data-id=done0000001]")
        expect(delivered).to_contain_text("delivered late")
        expect(delivered).to_contain_text("call the bank")
        expect(delivered).to_contain_text("user cy · chat tab-2")
        fits(page)
        page.screenshot(path=str(shots / "admin-jobs.png"), full_page=True)
        cron.locator("button.cancel").click()
        expect(page.locator("#jobs-message")).to_contain_text("cancelled", timeout=WAIT_MS)
        expect(page.locator("#jobs [data-channel=discord]")).to_have_count(0)
        expect(late).to_have_count(1)


def test_the_memory_page_says_when_memory_is_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clock: ManualClock, upstream: FakeUpstream
) -> None:
    running, _ = start_admin(tmp_path, monkeypatch, clock, upstream)  # memory: {enabled: false}
    try:
        with chromium() as browser:
            page = browser.new_page(viewport=PHONE)
            log_in(page, running.url)
            page.click("button[data-tab=memory]")
            expect(page.locator("#memory-off")).to_contain_text(
                "memory.enabled: false", timeout=WAIT_MS
            )
            expect(page.locator("#memory-user")).to_be_disabled()
            fits(page)
    finally:
        running.stop()
