"""Soak the multi-machine recipe (deploy/) for longer: two replicas behind a balancer, one killed
and restarted midway, the mixed workload throughout.

    python bench/soak_replicas.py [--seconds 60] [--writers 6] [--budget-calls 100000]
        [--postgres-dsn postgresql://postgres@127.0.0.1:5432/test] [--redis-url redis://...]

The same topology and workload as tests/deploy/test_soak.py (tests/deploy/topology.py and
workload.py): `nerve serve` replicas from deploy/nerve.yaml on a fresh PostgreSQL schema and
Redis prefix, fake model providers on loopback, the test balancer (round-robin, health-checked
on /ready) in front; memory writes, chat calls with a budgeted key and the recipe's
rpm-limited `ci` key, reminders through the web chat. Phases by the clock: both replicas for
a third of --seconds; then the replica holding the chat tab gets SIGKILL and is started again
on its port as soon as the balancer has taken it out; the rest of the time with both.

It prints markdown tables: requests and answers by kind and status (`conn`: the connection
failed or was cut before an answer), latency through the balancer (p50, p99), and the checks:
acknowledged writes lost (recalled on each replica), failed requests against those in flight
on the killed replica, the budget's calls billed against those acknowledged, the rpm window,
reminders acknowledged and delivered, and how long the replica was out. A check that fails
goes to stderr and makes the exit status 1. The schema and the Redis keys are removed at the
end; nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:  # `python bench/soak_replicas.py` puts bench/ on the path
    sys.path.insert(0, str(HERE.parent))

import asyncpg  # noqa: E402
import httpx  # noqa: E402
from redis.asyncio import Redis  # noqa: E402
from tests.deploy.topology import CALL_USD, Topology  # noqa: E402
from tests.deploy.workload import Keys, Workload  # noqa: E402
from tests.fakes.upstream import FakeUpstream  # noqa: E402

RPM = 60  # deploy/nerve.yaml's `ci` key


def quantile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def recalled(url: str, key: str, users: list[str]) -> dict[str, set[str]]:
    found = {}
    async with httpx.AsyncClient(timeout=60) as client:
        for user in users:
            body = {"user_id": user, "limit": 10000}
            headers = {"authorization": f"Bearer {key}"}
            r = await client.post(f"{url}/api/memory/recall", json=body, headers=headers)
            r.raise_for_status()
            found[user] = {rec["id"] for rec in r.json()["records"]}
    return found


async def budget_spend(topology: Topology, acked: int) -> dict[str, Any]:
    """The budget key's row of /stats once the live replicas paid what they owe (or 5 s)."""
    headers = {"authorization": f"Bearer {topology.budget_key}"}
    async with httpx.AsyncClient(timeout=10) as client:
        deadline = time.monotonic() + 5
        while True:
            stats = (await client.get(f"{topology.url(0)}/stats", headers=headers)).json()
            (row,) = [b for b in stats["budgets"] if b["key"] == "budget"]
            if row["usd"] >= acked * CALL_USD or time.monotonic() > deadline:
                return dict(row)
            await asyncio.sleep(0.05)


async def soak(args: argparse.Namespace, tmp: Path) -> tuple[Workload, dict[str, Any]]:
    schema, prefix = f"nerve_soak_{uuid.uuid4().hex[:8]}", f"nerve-soak:{uuid.uuid4().hex[:8]}:"
    with FakeUpstream(name="chat") as chat, FakeUpstream(name="assistant") as assistant:
        topology = Topology(
            tmp, storage_url=f"{args.postgres_dsn}?schema={schema}", redis_url=args.redis_url,
            prefix=prefix, chat=chat, assistant=assistant, budget_calls=args.budget_calls,
        )  # fmt: skip
        try:
            return await _run(args, topology, chat, assistant, prefix)
        finally:
            await topology.stop()
            await _clean(args, schema, prefix)


async def _run(
    args: argparse.Namespace, topology: Topology, chat: FakeUpstream, assistant: FakeUpstream,
    prefix: str,
) -> tuple[Workload, dict[str, Any]]:  # fmt: skip
    balancer = await topology.start(replicas=2)
    keys = Keys(app=topology.app_key, budget=topology.budget_key, rpm=topology.ci_key)
    workload = Workload(balancer.url, keys, assistant=assistant, writers=args.writers)
    running = asyncio.create_task(workload.run())
    started = time.monotonic()
    try:
        await asyncio.sleep(args.seconds / 3)
        (tab,) = [f for f in balancer.forwards if f.status == 101 and f.closed_at is None]
        victim = balancer.backends.index(tab.backend)
        killed_at = time.monotonic()
        topology.kill(victim)
        await balancer.wait_for(lambda: not balancer.up[tab.backend])
        await topology.restart(victim)
        await topology.in_rotation(victim)
        back_after = time.monotonic() - killed_at
        await asyncio.sleep(max(0.0, started + args.seconds - time.monotonic()))
    finally:
        workload.stop()
        await running
    elapsed = time.monotonic() - started
    try:
        async with asyncio.timeout(30):
            await workload.reminders_delivered()
    except TimeoutError:
        pass  # reported below as undelivered
    await workload.close()
    in_flight = [  # to the killed replica, still open at the kill; the tab's socket aside
        f for f in balancer.forwards
        if f.backend == tab.backend and f.turn == 1 and f.status != 101
        and (f.closed_at is None or f.closed_at >= killed_at)
    ]  # fmt: skip
    facts: dict[str, Any] = {"elapsed": elapsed, "back_after": back_after,
                             "in_flight": len(in_flight)}  # fmt: skip
    lost = 0
    for i in range(2):
        found = await recalled(topology.url(i), topology.app_key, list(workload.acked_ids))
        lost = max(lost, sum(len(ids - found[u]) for u, ids in workload.acked_ids.items()))
    facts["lost"] = lost
    facts["committed_unacked"] = sum(len(found[u] - ids) for u, ids in workload.acked_ids.items())
    budget = workload.outcomes.get("budget", {})
    facts["spend"] = await budget_spend(topology, budget.get("200", 0))
    reached = {r.body["messages"][0]["content"] for r in chat.requests if r.body}
    facts["reached_budget"] = len({t for t in reached if t.startswith("b")})
    async with Redis.from_url(args.redis_url, decode_responses=True) as redis:
        facts["rpm_window"] = await redis.zcard(f"{prefix}rl:{{key:ci:own}}:w")
    return workload, facts


async def _clean(args: argparse.Namespace, schema: str, prefix: str) -> None:
    conn = await asyncpg.connect(args.postgres_dsn)
    try:
        await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        await conn.close()
    async with Redis.from_url(args.redis_url) as redis:
        keys = [k async for k in redis.scan_iter(match=f"{prefix}*", count=1000)]
        if keys:
            await redis.delete(*keys)


def report(workload: Workload, facts: dict[str, Any]) -> list[str]:
    """Print the tables; return the findings (failed checks)."""
    print(f"## soak of deploy/: 2 replicas, one killed and restarted, {facts['elapsed']:.0f} s\n")
    print("| kind | requests | answers by status | p50 ms | p99 ms |")
    print("|---|---:|---|---:|---:|")
    for kind, outcomes in sorted(workload.outcomes.items()):
        lat = [s * 1000 for s in workload.latencies.get(kind, [])]
        shown = ", ".join(f"{k}: {v}" for k, v in outcomes.most_common())
        p50, p99 = (quantile(lat, 0.5), quantile(lat, 0.99)) if lat else (float("nan"),) * 2
        print(f"| {kind} | {sum(outcomes.values())} | {shown} | {p50:.1f} | {p99:.1f} |")
    budget = workload.outcomes.get("budget", {})
    spend = facts["spend"]
    billed = spend["usd"] / CALL_USD
    failed = sum(o.get("conn", 0) for o in workload.outcomes.values())
    undelivered = set(workload.reminders_acked) - set(workload.delivered)
    repeats = sum(len(ids) - 1 for ids in workload.delivered.values())
    rows = [
        ("acknowledged writes lost", facts["lost"], facts["lost"] == 0),
        ("writes committed, not acknowledged (in flight)", facts["committed_unacked"], True),
        ("failed requests / in flight on the killed replica",
         f"{failed} / {facts['in_flight']}", failed <= facts["in_flight"]),
        ("budget calls billed / acknowledged / reached upstream",
         f"{billed:g} / {budget.get('200', 0)} / {facts['reached_budget']}",
         budget.get("200", 0) <= billed <= facts["reached_budget"]),
        ("budget held by the killed replica (calls)", f"{spend['held_usd'] / CALL_USD:g}", True),
        ("rpm window in Redis (key limit 60)", facts["rpm_window"],
         facts["rpm_window"] <= RPM),
        ("reminders acknowledged / undelivered / repeats",
         f"{len(workload.reminders_acked)} / {len(undelivered)} / {repeats}", not undelivered),
        ("killed replica back in rotation after (s)", f"{facts['back_after']:.2f}", True),
    ]  # fmt: skip
    print("\n| check | value | ok |\n|---|---:|---|")
    findings = []
    for name, value, ok in rows:
        print(f"| {name} | {value} | {'yes' if ok else 'NO'} |")
        if not ok:
            findings.append(f"{name}: {value}")
    return findings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--writers", type=int, default=6)
    parser.add_argument("--budget-calls", type=int, default=100_000)
    parser.add_argument("--postgres-dsn", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/15")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workload, facts = asyncio.run(soak(args, Path(tmp)))
    findings = report(workload, facts)
    for finding in findings:
        print(f"FINDING {finding}", file=sys.stderr)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
