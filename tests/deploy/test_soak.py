"""The recipe of deploy/ under load, one replica killed and restarted (issue 19, "Many
machines"; SPEC ST).

Two real `nerve serve` replicas run deploy/nerve.yaml on one PostgreSQL schema and one Redis
prefix (tests/deploy/topology.py), behind the test balancer (round-robin, health-checked on
/ready). Memory writes, chat calls with a budgeted key and with the recipe's rpm-limited `ci`
key, and reminders set through the web chat all go through the balancer
(tests/deploy/workload.py). After 300 acknowledged writes the replica holding the chat tab is
killed with SIGKILL; once the balancer has taken it out and the survivor alone acknowledged 200
more, it is started again on the same port; the soak ends 300 writes after it is back.

What must hold, and how it is known:
- no acknowledged write is lost: every id a 200 returned is recalled afterwards, on each replica;
- only requests in flight on the killed replica failed: every client-side connection error has
  a balancer forward to that replica open across the kill (the balancer records each forward's
  backend, when it opened and closed, and the status line of its answer);
- no request was answered by a half-started replica: nothing was forwarded to it between the
  kill and its /ready turning 200 again; everything it answered after that is an expected
  status; and the moment its own /ready first says 200 (asked directly), it knows the managed
  key, refuses the rpm key whose shared window is full, and recalls what was written while it
  was down;
- limits and budgets are exact across replicas and the restart: the rpm window in Redis holds
  exactly the key's 60 admissions; the budget's spend is a whole number of calls, at least
  every acknowledged call and at most the calls the upstream saw, and with the holds still
  open it is the whole budget; no more calls reached the upstream than the budget pays for;
- every acknowledged reminder reaches the tab (again through the balancer), repeats only with
  the message id of the first delivery.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.deploy.topology import CALL_USD, Topology
from tests.deploy.workload import Keys, Workload
from tests.fakes.balancer import Balancer, Forward
from tests.fakes.upstream import FakeUpstream
from tests.memory.conftest import _admin

BUDGET_CALLS = 150
RPM = 60  # deploy/nerve.yaml's `ci` key
STEP_SECONDS = 30  # a bound on each wait, far above what it takes
EXPECTED = {
    "memory": {"200", "conn"},
    "budget": {"200", "429 budget_exceeded", "conn"},
    "rpm": {"200", "429 rpm", "conn"},
    "reminder": {"acked", "interrupted"},
}


@pytest.fixture
async def topology(
    postgres_schema: tuple[str, str], redis_url: str, redis_prefix: str, tmp_path: Path,
    upstream: FakeUpstream, upstream2: FakeUpstream,
) -> AsyncIterator[Topology]:  # fmt: skip
    dsn, schema = postgres_schema
    await _admin(dsn, f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    topology = Topology(
        tmp_path, storage_url=f"{dsn}?schema={schema}", redis_url=redis_url, prefix=redis_prefix,
        chat=upstream, assistant=upstream2, budget_calls=BUDGET_CALLS,
    )  # fmt: skip
    try:
        yield topology
    finally:
        await topology.stop()  # before redis_prefix deletes the keys


async def test_a_replica_killed_and_restarted_under_load_loses_nothing_and_keeps_limits_exact(
    topology: Topology, upstream: FakeUpstream, upstream2: FakeUpstream, redis_url: str,
    redis_prefix: str,
) -> None:  # fmt: skip
    balancer = await topology.start(replicas=2)
    keys = Keys(app=topology.app_key, budget=topology.budget_key, rpm=topology.ci_key)
    workload = Workload(balancer.url, keys, assistant=upstream2)
    running = asyncio.create_task(workload.run())
    try:
        async with asyncio.timeout(STEP_SECONDS):
            await workload.until(300)
        victim = _holding_the_tab(balancer)
        backend = topology.backend(victim)
        killed_at = time.monotonic()
        topology.kill(victim)
        async with asyncio.timeout(STEP_SECONDS):
            await balancer.wait_for(lambda: not balancer.up[backend])
            await workload.until(workload.acks + 200)  # the survivor alone
        await topology.restart(victim)
        first = await _first_contact(topology, victim, workload)
        await topology.in_rotation(victim)
        back_at = _came_back_at(balancer, backend)
        async with asyncio.timeout(STEP_SECONDS):
            await workload.until(workload.acks + 300)
    finally:
        workload.stop()
        await running
    try:
        async with asyncio.timeout(STEP_SECONDS):
            await workload.reminders_delivered()
    finally:
        await workload.close()

    # Only the expected kinds of answer, and the failures only from requests in flight.
    for kind, outcomes in workload.outcomes.items():
        assert set(outcomes) <= EXPECTED[kind], (kind, outcomes)
    in_flight = [f for f in balancer.forwards if _open_across(f, backend, killed_at)]
    failed = sum(outcomes["conn"] for outcomes in workload.outcomes.values())
    assert failed <= len([f for f in in_flight if f.status != 101]), (failed, in_flight)
    stray = [f for f in balancer.forwards if f.cut and not _open_across(f, backend, killed_at)]
    assert not stray, (stray, killed_at, backend, workload.outcomes)
    assert workload.outcomes["reminder"]["interrupted"] <= 1

    # Nothing was answered by the replica between the kill and its /ready answering 200 again
    # (connections its dying kernel still took got no answer), and what it answered afterwards
    # was an answer of a started replica.
    after = [f for f in balancer.forwards if f.backend == backend and f.opened_at >= killed_at]
    back = [f for f in after if f.turn == 2]
    assert all(f.status is None for f in after if f.turn == 1)
    assert all(f.opened_at >= back_at for f in back)
    assert back and {f.status for f in back} <= {200, 429, 101}, Counter(f.status for f in back)
    assert first["ready"] and first["rpm"] == (429, "rpm") and first["budget_known"]
    assert first["recalled"] == first["written"] > 0

    # No acknowledged write lost, read back through each replica.
    for i in range(2):
        found = await _recalled(topology.url(i), topology.app_key, list(workload.acked_ids))
        for user, ids in workload.acked_ids.items():
            assert ids <= found[user], (i, user, len(ids - found[user]))

    # The rpm window in Redis: exactly the key's 60 admissions, through both replicas.
    window = await _rpm_window(redis_url, redis_prefix)
    assert len(window) == RPM and len({m.split(":")[0] for m in window}) >= 2
    rpm = workload.outcomes["rpm"]
    assert rpm["200"] <= RPM <= rpm["200"] + rpm["conn"] and rpm["429 rpm"] > 0

    # The budget: whole calls billed, every acknowledged one at least, none past the budget.
    budget = workload.outcomes["budget"]
    assert budget["429 budget_exceeded"] > 0
    reached = {r.body["messages"][0]["content"] for r in upstream.requests if r.body}
    reached_budget = {t for t in reached if t.startswith("b")}
    assert workload.acked_tags["budget"] <= reached_budget
    assert len(reached_budget) <= BUDGET_CALLS
    spend = await _spend_settled(topology, budget["200"])
    billed = spend["usd"] / CALL_USD
    assert billed == int(billed) and budget["200"] <= billed <= len(reached_budget), spend
    assert spend["usd"] + spend["held_usd"] == topology.budget_usd  # the rest: killed holds
    assert spend["held_usd"] / CALL_USD <= budget["conn"]

    # Every acknowledged reminder arrived; a repeat only as the same message.
    assert workload.reminders_acked
    for tag in workload.reminders_acked:
        assert len(set(workload.delivered[tag])) == 1, (tag, workload.delivered[tag])
    assert workload.tab_connections >= 2  # the tab came back through the balancer


def _holding_the_tab(balancer: Balancer) -> int:
    """The index of the backend holding the chat tab's open WebSocket."""
    (tab,) = [f for f in balancer.forwards if f.status == 101 and f.closed_at is None]
    return balancer.backends.index(tab.backend)


def _open_across(forward: Forward, backend: tuple[str, int], at: float) -> bool:
    """Whether `forward` went to `backend` in its first turn and was still open at `at`, the
    kill. Opened before it, or just after: until a killed process's sockets are closed
    (milliseconds), the kernel still completes connections to its listening one."""
    open_at_kill = forward.closed_at is None or forward.closed_at >= at
    return forward.backend == backend and forward.turn == 1 and open_at_kill


def _came_back_at(balancer: Balancer, backend: tuple[str, int]) -> float:
    (_, back) = [t for t in balancer.transitions if t.backend == backend and t.up]
    return back.at


async def _first_contact(topology: Topology, i: int, workload: Workload) -> dict[str, object]:
    """Replica i from the instant its own /ready first answers 200: asked directly, at once."""
    url = topology.url(i)
    seen: dict[str, object] = {"ready": False}
    written = {user: set(ids) for user, ids in workload.acked_ids.items()}  # all while it was down
    async with httpx.AsyncClient(timeout=10) as client:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if (await client.get(f"{url}/ready")).status_code == 200:
                    seen["ready"] = True
                    break
            except httpx.TransportError:
                pass  # not listening yet: a half-started nerve does not accept connections
            await asyncio.sleep(0.02)  # polling a readiness condition, bounded by the deadline
        chat = {"model": "default", "messages": [{"role": "user", "content": "x000000000"}],
                "max_tokens": 8}  # fmt: skip
        ci, budgeted = (
            {"authorization": f"Bearer {key}"} for key in (topology.ci_key, topology.budget_key)
        )
        r = await client.post(f"{url}/v1/chat/completions", json=chat, headers=ci)
        seen["rpm"] = (r.status_code, r.json()["error"]["code"] if r.status_code != 200 else "")
        stats = await client.get(f"{url}/stats", headers=budgeted)
        seen["budget_known"] = stats.status_code == 200 and _budget_row(stats.json())["usd"] > 0
        found = await _recalled(url, topology.app_key, list(written), client)
    seen["written"] = sum(len(ids) for ids in written.values())
    seen["recalled"] = sum(len(ids & found[user]) for user, ids in written.items())
    return seen


async def _recalled(
    url: str, key: str, users: list[str], client: httpx.AsyncClient | None = None
) -> dict[str, set[str]]:
    async with httpx.AsyncClient(timeout=30) as own:
        http = client or own
        found = {}
        for user in users:
            r = await http.post(f"{url}/api/memory/recall", json={"user_id": user, "limit": 10000},
                                headers={"authorization": f"Bearer {key}"})  # fmt: skip
            assert r.status_code == 200, r.text
            found[user] = {rec["id"] for rec in r.json()["records"]}
        return found


async def _rpm_window(redis_url: str, prefix: str) -> list[str]:
    from redis.asyncio import Redis

    async with Redis.from_url(redis_url, decode_responses=True) as redis:
        return list(await redis.zrange(f"{prefix}rl:{{key:ci:own}}:w", 0, -1))


async def _spend_settled(topology: Topology, acked: int) -> dict[str, float]:
    """The budget key's spend once the live replicas paid what they owe (within 20 ms each):
    until it covers every acknowledged call, or 5 s (then the check above fails)."""
    headers = {"authorization": f"Bearer {topology.budget_key}"}
    async with httpx.AsyncClient(timeout=10) as client:
        deadline = time.monotonic() + 5
        while True:
            row = _budget_row(
                (await client.get(f"{topology.url(0)}/stats", headers=headers)).json()
            )
            if row["usd"] >= acked * CALL_USD or time.monotonic() > deadline:
                return {"usd": row["usd"], "held_usd": row["held_usd"]}
            await asyncio.sleep(0.02)  # polling a condition the replicas bring about, bounded


def _budget_row(stats: dict[str, Any]) -> dict[str, Any]:
    (row,) = [b for b in stats["budgets"] if b["key"] == "budget"]
    return row
