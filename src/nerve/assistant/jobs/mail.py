"""Mail monitoring: new mail in IMAP mailboxes, summarised and delivered to a channel.

Per account (`assistant.mail.accounts`) the monitor remembers, in the store, the mailbox's
UIDVALIDITY and the last UID it reported. New mail is what has a greater UID; the first check of
an account (or after UIDVALIDITY changed) reports what is UNSEEN. Messages are read with
BODY.PEEK, so they stay unread for the user. The account's position moves by compare-and-set
before anything is delivered, so monitors on several replicas report each mail once.

IMAP goes through the standard library's `imaplib` in a worker thread (one short session per
check: log in, select read-only, search, fetch, log out). `summarize(text) -> str` is injected
(the server wires a model through the gateway); without it, or when it fails, the summary is
the sender, the subject and the first lines.
"""

from __future__ import annotations

import asyncio
import contextlib
import email
import email.policy
import imaplib
import logging
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from email.message import EmailMessage
from typing import Any

from nerve.assistant.bus import Outbound
from nerve.assistant.jobs.store import JobStore
from nerve.config_sections import MailAccountConfig

__all__ = ["Mail", "MailMonitor", "fallback_summary", "gateway_summarizer"]

log = logging.getLogger("nerve.jobs.mail")

Summarize = Callable[[str], Awaitable[str]]
_MAX_FETCH = 65536  # bytes of each message read: headers and the start of the body


@dataclass(frozen=True, slots=True)
class Mail:
    uid: int
    sender: str
    subject: str
    body: str  # plain text, possibly cut

    def as_text(self, limit: int = 4000) -> str:
        return f"From: {self.sender}\nSubject: {self.subject}\n\n{self.body[:limit]}"


@dataclass(frozen=True, slots=True)
class _Fetched:
    uidvalidity: int
    top: int  # the highest UID in the mailbox that is now accounted for
    new: list[tuple[int, bytes]]  # the newest new messages, oldest first
    more: int  # new messages beyond the limit, not fetched


def _parse(uid: int, raw: bytes) -> Mail:
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    assert isinstance(msg, EmailMessage)
    body = ""
    with contextlib.suppress(LookupError, ValueError):  # undecodable: headers only
        part = msg.get_body(preferencelist=("plain", "html"))
        if part is not None:
            body = str(part.get_content())
            if part.get_content_type() == "text/html":
                body = re.sub(r"<[^>]+>", " ", body)
    text = "\n".join(line.strip() for line in body.splitlines() if line.strip())
    return Mail(uid, str(msg.get("From", "(unknown sender)")), str(msg.get("Subject", "")), text)


def fallback_summary(mail: Mail, lines: int = 3) -> str:
    first = "\n".join(mail.body.splitlines()[:lines])
    return f"From {mail.sender}: {mail.subject or '(no subject)'}" + (f"\n{first}" if first else "")


def _fetch(
    account: MailAccountConfig, seen: tuple[int, int] | None, limit: int, timeout: float
) -> _Fetched:
    """One IMAP session (blocking; runs in a thread)."""
    cls = imaplib.IMAP4_SSL if account.ssl else imaplib.IMAP4
    imap = cls(account.host, account.port, timeout=timeout)
    try:
        imap.login(account.username, account.password)
        folder = account.folder if " " not in account.folder else f'"{account.folder}"'
        status, data = imap.select(folder, readonly=True)
        if status != "OK":
            raise imaplib.IMAP4.error(f"cannot open folder {account.folder!r}: {data!r}")
        validity = int(imap.response("UIDVALIDITY")[1][0] or 0)
        uidnext = int(imap.response("UIDNEXT")[1][0] or 0)
        if seen is not None and seen[0] == validity:
            _, found = imap.uid("SEARCH", f"UID {seen[1] + 1}:*")
            floor = seen[1]
        else:  # first look, or the mailbox was rebuilt: what the user has not read
            _, found = imap.uid("SEARCH", "UNSEEN")
            floor = 0
        uids = sorted(u for u in (int(x) for x in (found[0] or b"").split()) if u > floor)
        top = max([floor, uidnext - 1, *uids])
        new: list[tuple[int, bytes]] = []
        for uid in uids[-limit:]:
            _, parts = imap.uid("FETCH", str(uid), f"(BODY.PEEK[]<0.{_MAX_FETCH}>)")
            raw = next((p[1] for p in parts if isinstance(p, tuple)), b"")
            new.append((uid, bytes(raw)))
        return _Fetched(validity, top, new, max(0, len(uids) - limit))
    finally:
        with contextlib.suppress(Exception):
            imap.logout()


class MailMonitor:
    def __init__(
        self,
        accounts: Sequence[MailAccountConfig],
        store: JobStore,
        deliver: Callable[[Outbound], Awaitable[None]],
        *,
        summarize: Summarize | None = None,
        clock: Callable[[], float] = time.time,
        poll_seconds: float = 60,
        max_per_check: int = 10,
        timeout: float = 30,
    ) -> None:
        self.accounts = list(accounts)
        self.store = store
        self.deliver = deliver
        self.summarize = summarize
        self.clock = clock
        self.poll = poll_seconds
        self.limit = max_per_check
        self.timeout = timeout

    async def _summary(self, mail: Mail) -> str:
        if self.summarize is not None:
            try:
                summary = (await self.summarize(mail.as_text())).strip()
                if summary:
                    return f"From {mail.sender}: {mail.subject or '(no subject)'}\n{summary}"
            except Exception:
                log.warning("mail summary failed; sending the first lines", exc_info=True)
        return fallback_summary(mail)

    async def check(self, account: MailAccountConfig) -> int:
        """Report this account's new mail; the number of mails delivered. Raises on IMAP
        errors (`check_all` logs them)."""
        seen = await self.store.mail_seen(account.name)
        got = await asyncio.to_thread(_fetch, account, seen, self.limit, self.timeout)
        position = (got.uidvalidity, got.top)
        if position == seen:
            return 0
        if not await self.store.advance_mail(account.name, seen, position, self.clock()):
            return 0  # another monitor reported these
        for uid, raw in got.new:
            text = await self._summary(_parse(uid, raw))
            await self.deliver(
                Outbound(account.channel, account.chat_id, f"📧 New mail ({account.name}) {text}")
            )
        if got.more:
            note = f"📧 {got.more} more new mail(s) in {account.name}, not summarised"
            await self.deliver(Outbound(account.channel, account.chat_id, note))
        return len(got.new)

    async def check_all(self) -> dict[str, int | str]:
        """Every account: mails delivered, or the error (logged, never raised)."""
        done: dict[str, int | str] = {}
        for account in self.accounts:
            try:
                done[account.name] = await self.check(account)
            except Exception as exc:  # IMAP, network, auth: next poll tries again
                log.warning("mail account %s: %s", account.name, exc)
                done[account.name] = f"{type(exc).__name__}: {exc}"
        return done

    async def run(self) -> None:
        """Check every account every `poll_seconds`, forever."""
        while True:
            await self.check_all()
            await asyncio.sleep(self.poll)


_SUMMARY_PROMPT = (
    "Summarise this email for its recipient in one or two short sentences: who wants what, "
    "and any date or amount. Plain text, no preamble."
)


def gateway_summarizer(
    ask: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]], model: str = "auto"
) -> Summarize:
    """`summarize(text)` through the assistant's `ask` (a chat completion via the gateway)."""

    async def summarize(text: str) -> str:
        body = {
            "model": model,
            "messages": [
                {"role": "system", "content": _SUMMARY_PROMPT},
                {"role": "user", "content": text},
            ],
            "max_tokens": 200,
        }
        answer = await ask(body)
        return str(answer["choices"][0]["message"]["content"] or "")

    return summarize
