"""The soak's mixed workload, sent through one address (the balancer), and what came back.

    workload = Workload(url, Keys(app=..., budget=..., rpm=...), assistant=fake_upstream)
    running = asyncio.create_task(workload.run())
    await workload.until(300)            # memory writes acknowledged so far (under a timeout)
    workload.stop(); await running       # stops sending; the tab stays open for reminders
    await workload.reminders_delivered(); await workload.close()

What it sends, each request on a connection of its own (so a balancer spreads requests, not
connections), paced by the memory writes acknowledged so far (`until`), not by the clock:

- memory: `writers` closed loops of `POST /api/memory/store` (user `w<i>`, importance 0.8);
  a 200 is acknowledged and its id kept in `acked_ids`;
- chat: the real `openai` SDK (no retries) on `/v1/chat/completions`, with the budgeted key
  (one call per `budget_every` writes) and with the rpm-limited key (one per `rpm_every`),
  two at a time each; every call's message is a 10-character tag (`b000000042`), so the
  budget's estimate (10 prompt tokens + max_tokens 8) is what the fake upstream reports (11 +
  7), and the upstream's record says which calls reached it;
- reminders: one web chat tab (`/chat/ws`, the app key as its subprotocol) asks the assistant
  for a reminder due in 2 s, one per `reminder_every` writes, one at a time; the fake
  upstream answers with a `reminder` tool call, then `set <tag>`: that reply acknowledges it.
  The tab reconnects (through the balancer) whenever its replica goes away.

Outcomes per kind in `outcomes`: "200", "429 rpm", "429 budget_exceeded", "conn" (the
connection failed or was cut before an answer: not acknowledged), else "<status> <code>".
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
import httpx
import openai

from tests.fakes.upstream import FakeUpstream, Reply

__all__ = ["Keys", "Workload"]

REMINDER = re.compile(r"^⏰ Reminder: soak (m\d+)")
CONN_ERRORS = (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError, asyncio.TimeoutError)


@dataclass(frozen=True)
class Keys:
    app: str  # memory and the web chat
    budget: str  # a budget, no rpm
    rpm: str  # an rpm limit, no budget


@dataclass
class Workload:
    url: str
    keys: Keys
    assistant: FakeUpstream  # the assistant's model (scripted per reminder turn)
    writers: int = 6
    budget_every: int = 3
    rpm_every: int = 2
    reminder_every: int = 60
    outcomes: dict[str, Counter[str]] = field(default_factory=dict)
    latencies: dict[str, list[float]] = field(default_factory=dict)
    acked_ids: dict[str, set[str]] = field(default_factory=dict)  # memory user → record ids
    acked_tags: dict[str, set[str]] = field(default_factory=dict)  # chat kind → tags answered
    reminders_acked: list[str] = field(default_factory=list)
    delivered: dict[str, list[str]] = field(default_factory=dict)  # reminder tag → message ids
    tab_connections: int = 0

    def __post_init__(self) -> None:
        self.acks = 0
        self._progress = asyncio.Condition()
        self._stopping = asyncio.Event()
        self._delivery = asyncio.Condition()
        self._replies: asyncio.Queue[str] = asyncio.Queue()
        self._numbers = {"budget": itertools.count(1), "rpm": itertools.count(1)}
        self._tab: asyncio.Task[None] | None = None
        self._socket: aiohttp.ClientWebSocketResponse | None = None
        self._connected = asyncio.Event()
        self._http = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(force_close=True, limit=0),
            timeout=aiohttp.ClientTimeout(total=30),
        )

    # --- driving ----------------------------------------------------------------------------

    async def run(self) -> None:
        """Send until `stop()`; every loop ends after its request in flight."""
        budget = self._sdk(self.keys.budget)
        rpm = self._sdk(self.keys.rpm)
        try:
            await asyncio.gather(
                *(self._writer(i) for i in range(self.writers)),
                *(self._chat("budget", budget, self.budget_every, "b") for _ in range(2)),
                *(self._chat("rpm", rpm, self.rpm_every, "r") for _ in range(2)),
                self._reminders(),
            )
        finally:
            await budget.close()
            await rpm.close()

    def stop(self) -> None:
        self._stopping.set()
        self._wake()

    async def until(self, acks: int) -> None:
        """Until `acks` memory writes were acknowledged in all (callers bound the wait)."""
        async with self._progress:
            await self._progress.wait_for(lambda: self.acks >= acks)

    async def reminders_delivered(self) -> None:
        """Until every acknowledged reminder reached the tab (callers bound the wait)."""
        async with self._delivery:
            await self._delivery.wait_for(lambda: set(self.reminders_acked) <= set(self.delivered))

    async def close(self) -> None:
        if self._tab is not None:
            self._tab.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._tab
        await self._http.close()

    def _count(self, kind: str, outcome: str, started: float | None = None) -> None:
        self.outcomes.setdefault(kind, Counter())[outcome] += 1
        if started is not None:
            self.latencies.setdefault(kind, []).append(time.perf_counter() - started)

    def _wake(self) -> None:
        async def notify() -> None:
            async with self._progress:
                self._progress.notify_all()

        asyncio.get_running_loop().create_task(notify())

    async def _paced(self, n: int) -> bool:
        """Wait for the n-th acknowledged write; False once stopping."""
        async with self._progress:
            await self._progress.wait_for(lambda: self.acks >= n or self._stopping.is_set())
        return not self._stopping.is_set()

    # --- memory -----------------------------------------------------------------------------

    async def _writer(self, i: int) -> None:
        user, headers = f"w{i}", {"authorization": f"Bearer {self.keys.app}"}
        acked = self.acked_ids.setdefault(user, set())
        for n in itertools.count():
            if self._stopping.is_set():
                return
            body = {"user_id": user, "tier": "episodic", "intent": "note", "importance": 0.8,
                    "data": {"text": f"soak write {user}-{n}"}}  # fmt: skip
            started = time.perf_counter()
            try:
                async with self._http.post(
                    f"{self.url}/api/memory/store", json=body, headers=headers
                ) as r:
                    answer = await r.json(content_type=None)
                    status = r.status
            except CONN_ERRORS:
                self._count("memory", "conn")
                continue
            if status != 200:
                self._count("memory", f"{status} {_code(answer)}", started)
                continue
            self._count("memory", "200", started)
            acked.add(str(answer["id"]))
            async with self._progress:
                self.acks += 1
                self._progress.notify_all()

    # --- chat -------------------------------------------------------------------------------

    def _sdk(self, key: str) -> openai.AsyncOpenAI:
        # No keep-alive: each call is a connection of its own, so the balancer spreads calls.
        http = httpx.AsyncClient(limits=httpx.Limits(max_keepalive_connections=0), timeout=30)
        return openai.AsyncOpenAI(
            base_url=f"{self.url}/v1", api_key=key, max_retries=0, http_client=http
        )

    async def _chat(self, kind: str, client: openai.AsyncOpenAI, every: int, prefix: str) -> None:
        acked = self.acked_tags.setdefault(kind, set())
        for i in self._numbers[kind]:  # shared by the kind's two loops
            if not await self._paced(i * every):
                return
            tag = f"{prefix}{i:09d}"
            started = time.perf_counter()
            try:
                answer = await client.chat.completions.create(
                    model="default", messages=[{"role": "user", "content": tag}], max_tokens=8
                )
            except openai.APIConnectionError:
                self._count(kind, "conn")
                continue
            except openai.APIStatusError as e:
                self._count(kind, f"{e.status_code} {_code(e.body)}", started)
                continue
            assert answer.usage is not None and answer.usage.total_tokens == 18
            self._count(kind, "200", started)
            acked.add(tag)

    # --- reminders --------------------------------------------------------------------------

    async def _reminders(self) -> None:
        for i in itertools.count(1):
            if not await self._paced(i * self.reminder_every):
                return
            tag, started = f"m{i:04d}", time.perf_counter()
            outcome = await self._set_reminder(tag)
            self._count("reminder", outcome, started if outcome == "acked" else None)
            if outcome == "acked":
                self.reminders_acked.append(tag)

    async def _set_reminder(self, tag: str) -> str:
        """One turn: "acked" when the assistant's reply came, "interrupted" when the tab's
        socket closed first (its replica went away: the reminder may or may not be set)."""
        if self._tab is None:
            self._tab = asyncio.create_task(self._hold_tab())
        async with asyncio.timeout(30):
            await self._connected.wait()  # _hold_tab connects (again) through the balancer
        ws = self._socket
        assert ws is not None
        while not self._replies.empty():  # what an earlier, interrupted turn left
            self._replies.get_nowait()
        due = (datetime.now(UTC) + timedelta(seconds=2)).isoformat(timespec="seconds")
        call = {"name": "reminder",
                "arguments": {"action": "add", "text": f"soak {tag}", "at": due}}  # fmt: skip
        self.assistant.reset()  # the turns are one at a time: the script is this turn's
        self.assistant.script(Reply(tool_calls=[{"id": tag, "function": call}]),
                              Reply(text=f"set {tag}"))  # fmt: skip
        try:
            await ws.send_json({"text": f"remind me in 2 seconds: {tag}"})
        except (ConnectionError, RuntimeError):
            return "interrupted"
        async with asyncio.timeout(20):
            while (reply := await self._replies.get()) != f"set {tag}":
                if reply == "closed":
                    return "interrupted"
        return "acked"

    async def _hold_tab(self) -> None:
        """The tab: connected (through the balancer) again whenever its socket closes."""
        ws_url = self.url.replace("http://", "ws://") + "/chat/ws?chat=soak&user=asha"
        protocols = ("nerve", f"nerve.key.{self.keys.app}")
        while True:
            try:
                async with self._http.ws_connect(ws_url, protocols=protocols) as ws:
                    hello = await asyncio.wait_for(ws.receive_json(), 10)
                    assert hello["kind"] == "hello", hello
                    self.tab_connections += 1
                    self._socket = ws
                    self._connected.set()
                    async for message in ws:
                        if message.type == aiohttp.WSMsgType.TEXT:
                            await self._tab_message(message.json())
            except (*CONN_ERRORS, aiohttp.WSServerHandshakeError):
                await asyncio.sleep(0.05)  # a browser's reconnect backoff, not a wait on timing
            self._connected.clear()
            self._replies.put_nowait("closed")

    async def _tab_message(self, message: dict[str, Any]) -> None:
        if message.get("kind") != "message":
            return
        text = str(message.get("text", ""))
        if (fired := REMINDER.match(text)) is not None:
            async with self._delivery:
                self.delivered.setdefault(fired.group(1), []).append(str(message.get("id")))
                self._delivery.notify_all()
        else:
            self._replies.put_nowait(text)


def _code(body: Any) -> str:
    """The error code of an OpenAI-shaped error body (nerve's), else "-"."""
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("code"):
            return str(error["code"])
    return "-"
