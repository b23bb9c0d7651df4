"""Mail monitoring against a real IMAP server (dovecot on loopback) and a real store (SQLite)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from nerve.assistant.bus import Outbound
from nerve.assistant.jobs.mail import MailMonitor
from nerve.assistant.jobs.store import SQLiteJobStore
from nerve.config_sections import MailAccountConfig
from tests.jobs.dovecot import Dovecot

Monitor = Callable[..., Awaitable[MailMonitor]]


@pytest.fixture
def dovecot(mailbox: tuple[Dovecot, str]) -> Dovecot:
    return mailbox[0]


@pytest.fixture
def alice(mailbox: tuple[Dovecot, str]) -> str:
    return mailbox[1]


@pytest.fixture
def account(dovecot: Dovecot, alice: str) -> MailAccountConfig:
    return MailAccountConfig(
        name="home", host="127.0.0.1", port=dovecot.port, ssl=False, username=alice,
        password="wonderland", channel="discord", chat_id="c1",
    )  # fmt: skip


@pytest.fixture
async def sent() -> list[Outbound]:
    return []


@pytest.fixture
async def monitor(tmp_path: Path, account: MailAccountConfig, sent: list[Outbound]):  # type: ignore[no-untyped-def]
    stores: list[SQLiteJobStore] = []

    async def deliver(out: Outbound) -> None:
        sent.append(out)

    async def make(**options: object) -> MailMonitor:
        store = SQLiteJobStore(tmp_path / "nerve.db")
        await store.open()
        stores.append(store)
        return MailMonitor([account], store, deliver, **options)  # type: ignore[arg-type]

    yield make
    for store in stores:
        await store.close()


async def test_unseen_then_only_new_mail_is_summarised_and_left_unread(
    dovecot: Dovecot, alice: str, account: MailAccountConfig, monitor: Monitor, sent: list[Outbound]
) -> None:
    dovecot.append(alice, "old@example.com", "read already", "x", seen=True)
    dovecot.append(alice, "Bob <bob@example.com>", "Lunch?", "Are you free at noon?\nBob")
    m = await monitor()
    assert await m.check(account) == 1
    (out,) = sent
    assert (out.channel, out.chat_id) == ("discord", "c1")
    assert out.text == (
        "📧 New mail (home) From Bob <bob@example.com>: Lunch?\nAre you free at noon?\nBob"
    )
    assert await m.check(account) == 0  # nothing new
    asked: list[str] = []

    async def summarize(text: str) -> str:
        asked.append(text)
        return "Invoice 42 is due Friday."

    m.summarize = summarize
    dovecot.append(alice, "billing@example.com", "Invoice 42", "Please pay by Friday.")
    assert await m.check(account) == 1
    assert asked == ["From: billing@example.com\nSubject: Invoice 42\n\nPlease pay by Friday."]
    assert sent[-1].text.endswith("Invoice 42\nInvoice 42 is due Friday.")
    assert dovecot.unseen(alice) == 2  # BODY.PEEK: still unread for the user


async def test_the_position_survives_a_restart_and_two_monitors_report_once(
    dovecot: Dovecot, alice: str, account: MailAccountConfig, monitor: Monitor, sent: list[Outbound]
) -> None:
    dovecot.append(alice, "a@example.com", "one", "1")
    first = await monitor()
    assert await first.check(account) == 1
    await first.store.close()
    a, b = await monitor(), await monitor()  # a restart, and a second replica
    assert await a.check(account) == 0
    dovecot.append(alice, "a@example.com", "two", "2")
    counts = await asyncio.gather(a.check(account), b.check(account))
    assert sorted(counts) == [0, 1] and [o.text.split(": ")[-1] for o in sent] == [
        "one\n1",
        "two\n2",
    ]


async def test_a_failing_summary_falls_back_and_a_flood_is_capped(
    dovecot: Dovecot, alice: str, account: MailAccountConfig, monitor: Monitor, sent: list[Outbound]
) -> None:
    async def broken(text: str) -> str:
        raise RuntimeError("model down")

    m = await monitor(summarize=broken, max_per_check=2)
    for i in range(3):
        dovecot.append(alice, "x@example.com", f"s{i}", f"body {i}")
    assert await m.check(account) == 2
    assert [o.text for o in sent] == [
        "📧 New mail (home) From x@example.com: s1\nbody 1",
        "📧 New mail (home) From x@example.com: s2\nbody 2",
        "📧 1 more new mail(s) in home, not summarised",
    ]


async def test_a_wrong_password_is_reported_not_raised(
    account: MailAccountConfig, monitor: Monitor, sent: list[Outbound]
) -> None:
    m = await monitor()
    m.accounts = [account.model_copy(update={"password": "nope"})]
    result = await m.check_all()
    assert "AUTHENTICATIONFAILED" in str(result["home"]) and sent == []
    assert "nope" not in str(result)
