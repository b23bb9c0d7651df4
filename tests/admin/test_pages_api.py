"""The admin panel's Memory, Jobs, Safety and Agents pages' APIs: each reads or acts through the
running server's own Python APIs, behind the admin session, and answers bad input with a 4xx
naming what is wrong."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from nerve.admin import jobs_api
from nerve.agents.model import Agent
from nerve.assistant.jobs.scheduler import Scheduler
from nerve.assistant.jobs.store import Job, job_store_from_url
from nerve.config import load_config
from nerve.gateway.resilience import ManualClock
from nerve.server import build_app
from tests.admin.conftest import CONFIG, LITERAL_KEY, PASSWORD, Harness
from tests.fakes.upstream import FakeUpstream

PAGES = [
    "/admin/api/memory/records?user_id=ann",
    "/admin/api/memory/context?user_id=ann",
    "/admin/api/jobs",
    "/admin/api/safety/verdicts",
    "/admin/api/agents",
]


@pytest.fixture
async def remembering(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clock: ManualClock, upstream: FakeUpstream
) -> AsyncIterator[Harness]:
    """The admin harness with memory on (in the SQLite file under tmp_path)."""
    monkeypatch.setenv("NERVE_ADMIN_PASSWORD", PASSWORD)
    monkeypatch.setenv("NERVE_TEST_KEY", "sk-from-env-000111")
    text = CONFIG.format(url=upstream.openai_base_url, literal=LITERAL_KEY, enc="x")
    path = tmp_path / "nerve.yaml"
    path.write_text(text.replace("memory: {enabled: false}", "memory: {enabled: true}"))
    app = build_app(load_config(str(path)), clock=clock, config_path=path)
    async with app.api.router.lifespan_context(app.api):
        yield Harness(app, path, clock)


async def seed(admin: Harness) -> dict[str, str]:
    memory = admin.app.memory
    coffee = await memory.store_memory(
        "ann",
        tier="episodic",
        intent="preference",
        data={"text": "ann likes strong coffee"},
        importance=0.8,
    )
    event = await memory.record_event("ann", "s1", "eye_read", {"path": "/pricing.md"}, 0.7)
    fact = await memory.store_fact("ann", "ann", "city", "Lisbon", 0.9)
    await memory.store_memory(
        "bob", tier="episodic", intent="note", data={"text": "bob likes tea"}, importance=0.8
    )
    assert coffee.id and event.id and fact.id
    return {"coffee": coffee.id, "event": event.id, "fact": fact.id}


async def test_memory_page_lists_filters_builds_context_and_forgets(remembering: Harness) -> None:
    ids = await seed(remembering)
    async with remembering.session() as client:
        every = (await client.get("/admin/api/memory/records", params={"user_id": "ann"})).json()
        facts = await client.get(
            "/admin/api/memory/records", params={"user_id": "ann", "kind": "fact"}
        )
        coffee = await client.get(
            "/admin/api/memory/records", params={"user_id": "ann", "query": "coffee"}
        )
        context = await client.get(
            "/admin/api/memory/context", params={"user_id": "ann", "query": "coffee"}
        )
        gone = await client.delete(f"/admin/api/memory/records/{ids['coffee']}")
        again = await client.delete(f"/admin/api/memory/records/{ids['coffee']}")
        user = await client.delete("/admin/api/memory/users/ann")
        after = (await client.get("/admin/api/memory/records", params={"user_id": "ann"})).json()
        bob = (await client.get("/admin/api/memory/records", params={"user_id": "bob"})).json()
        audit = (
            await client.get("/admin/api/logs", params={"kind": "MEMORY_FORGET,MEMORY_FORGET_USER"})
        ).json()
    assert {r["id"] for r in every["records"]} == set(ids.values())
    assert [r["id"] for r in facts.json()["records"]] == [ids["fact"]]
    assert [r["id"] for r in coffee.json()["records"]] == [ids["coffee"]]
    block = context.json()["prompt_block"]
    assert "Lisbon" in block and "coffee" in block
    assert {i["source"] for i in context.json()["items"]} >= {"fact", "search"}
    assert gone.status_code == 200 and gone.json()["user_id"] == "ann"
    assert again.status_code == 404 and "no memory with id" in again.json()["error"]["message"]
    assert user.status_code == 200 and user.json() == {"deleted": 2, "user_id": "ann"}
    assert after["records"] == [] and len(bob["records"]) == 1  # only ann's went
    assert [e["kind"] for e in audit["events"]] == ["MEMORY_FORGET", "MEMORY_FORGET_USER"]


async def test_memory_page_refuses_bad_input_by_name(remembering: Harness) -> None:
    async with remembering.session() as client:
        cases = [
            ({}, "user_id"),
            ({"user_id": "  "}, "user_id"),
            ({"user_id": "ann", "kind": "dream"}, "kind"),
            ({"user_id": "ann", "limit": "lots"}, "limit"),
            ({"user_id": "ann", "limit": "0"}, "limit"),
        ]
        for params, name in cases:
            refused = await client.get("/admin/api/memory/records", params=params)
            assert refused.status_code == 400, params
            assert f"'{name}'" in refused.json()["error"]["message"]
        no_user = await client.get("/admin/api/memory/context")
    assert no_user.status_code == 400 and "'user_id' is required" in no_user.text


async def test_memory_off_is_a_404_that_says_so(admin: Harness) -> None:
    async with admin.session() as client:
        listed = await client.get("/admin/api/memory/records", params={"user_id": "ann"})
        forget = await client.delete("/admin/api/memory/users/ann")
    for answer in (listed, forget):
        assert answer.status_code == 404
        assert answer.json()["error"]["code"] == "memory_disabled"


async def test_jobs_page_lists_every_channel_marks_late_ones_and_cancels(admin: Harness) -> None:
    jobs = admin.app.assistant.jobs
    assert jobs is not None
    scheduler = jobs.scheduler
    cron = await scheduler.add("ann", "discord", "c1", "stand-up", cron="0 9 * * 1-5")
    now = time.time()
    late = Job(
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
    await scheduler.store.insert(late)  # due an hour ago: nobody could deliver it (no tab open)
    async with admin.session() as client:
        listed = (await client.get("/admin/api/jobs")).json()
        unknown = await client.delete("/admin/api/jobs/nosuchjob")
        cancelled = await client.delete(f"/admin/api/jobs/{cron['id']}")
        after = (await client.get("/admin/api/jobs")).json()
    by_id = {j["id"]: j for j in listed["jobs"]}
    assert listed["channels"] == {"discord": 1, "web": 1}
    assert by_id[cron["id"]]["state"] == "pending" and by_id[cron["id"]]["cron"] == "0 9 * * 1-5"
    assert by_id[cron["id"]]["next_run"] == cron["next_run"]
    assert by_id["late0000001"]["state"] == "late" and by_id["late0000001"]["user_id"] == "bob"
    assert unknown.status_code == 404 and "no job with id 'nosuchjob'" in unknown.text
    assert cancelled.status_code == 200 and cancelled.json() == {"cancelled": cron["id"]}
    assert [j["id"] for j in after["jobs"]] == ["late0000001"]


async def test_safety_page_tries_a_command_and_lists_verdicts(admin: Harness) -> None:
    async with admin.session() as client:
        blocked = await client.post(
            "/admin/api/safety/check", json={"kind": "shell", "content": "rm -rf /"}
        )
        allowed = await client.post(
            "/admin/api/safety/check", json={"kind": "sql", "content": "SELECT 1"}
        )
        logging.getLogger("nerve.gateway").warning(
            "GUARD BLOCKED route=default bash (critical risk): deletes the root filesystem"
        )  # as the gateway's guard logs a blocked tool call (traffic.py)
        every = (await client.get("/admin/api/safety/verdicts")).json()["verdicts"]
        refused = (
            await client.get("/admin/api/safety/verdicts", params={"allowed": "false"})
        ).json()["verdicts"]
        shell = (await client.get("/admin/api/safety/verdicts", params={"kind": "shell"})).json()[
            "verdicts"
        ]
        bad = [
            await client.post("/admin/api/safety/check", json={"kind": "bash", "content": "ls"}),
            await client.post("/admin/api/safety/check", json={"kind": "shell", "content": " "}),
            await client.post("/admin/api/safety/check", json={"kind": "shell"}),
            await client.get("/admin/api/safety/verdicts", params={"allowed": "maybe"}),
            await client.get("/admin/api/safety/verdicts", params={"kind": "poem"}),
        ]
    assert blocked.status_code == 200 and blocked.json()["verdict"]["allowed"] is False
    assert blocked.json()["verdict"]["reason"]
    assert allowed.json()["verdict"]["allowed"] is True
    assert [(v["source"], v["kind"], v["allowed"]) for v in every] == [
        ("guard", "tool_call", False),
        ("admin", "sql", True),
        ("admin", "shell", False),
    ]
    assert every[0]["subject"] == "bash" and every[0]["risk_level"] == "critical"
    assert (
        every[2]["subject"] == "rm -rf /"
        and every[2]["reason"] == blocked.json()["verdict"]["reason"]
    )
    assert [v["kind"] for v in refused] == ["tool_call", "shell"]
    assert [v["subject"] for v in shell] == ["rm -rf /"]
    assert [r.status_code for r in bad] == [400] * 5
    assert "'kind' is one of shell, sql, text, action" in bad[0].text


async def test_agents_page_shows_the_registry_and_route_failures(admin: Harness) -> None:
    agents = admin.app.agents
    await agents.store.upsert(Agent("coder", "http://127.0.0.1:9/run", ("code",), 1.0, 2.0))
    await agents.store.upsert(Agent("writer", "http://127.0.0.1:9/w", ("text",), 1.0, 1.0))
    logging.getLogger("nerve.agents").warning(
        "agent %s failed task %s: %s", "coder", "code", "connection refused"
    )  # as AgentRegistry.route logs a failed route
    async with admin.session() as client:
        data = (await client.get("/admin/api/agents")).json()
    coder, writer = data["agents"]
    assert (coder["agent_name"], coder["capabilities"], coder["failures"]) == ("coder", ["code"], 1)
    assert coder["last_failure"]["error"] == "connection refused"
    assert writer["failures"] == 0 and writer["last_failure"] is None
    assert [f["task"] for f in data["failures"]] == ["code"] and "failures only" in data["note"]


async def test_the_pages_need_a_session_and_changes_the_same_origin(admin: Harness) -> None:
    async with admin.client() as anonymous:
        for path in PAGES:
            assert (await anonymous.get(path)).status_code == 401, path
        assert (await anonymous.delete("/admin/api/jobs/x")).status_code == 401
        assert (await anonymous.delete("/admin/api/memory/users/ann")).status_code == 401
    async with admin.session() as client:
        evil = await client.post(
            "/admin/api/safety/check",
            headers={"origin": "https://evil"},
            json={"kind": "shell", "content": "ls"},
        )
        cross = await client.delete("/admin/api/jobs/x", headers={"origin": "https://evil"})
    assert evil.status_code == 403 and cross.status_code == 403


async def test_every_job_is_listed_a_page_at_a_time_on_both_backends(
    storage_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Jobs page reads the store's `due` with no upper bound (math.inf): SQLite and
    PostgreSQL both take it, and paging past the first page loses and repeats nothing."""
    monkeypatch.setattr(jobs_api, "PAGE", 2)
    store = job_store_from_url(storage_url)
    scheduler = Scheduler(store, lambda job, late: _never())
    await scheduler.open()
    try:
        for i in range(5):
            at = 2_000_000_000.0 + i * 60 * (i % 2 or -1)  # not in id order
            await store.insert(Job(f"job{i}", "ann", "web", "t", "x", "notify", None, at, at,
                                   None, 1.0))  # fmt: skip
        found = await jobs_api._all(scheduler)
    finally:
        await scheduler.close()
    assert sorted(j.id for j in found) == [f"job{i}" for i in range(5)]
    assert [j.next_run for j in found] == sorted(j.next_run for j in found)


async def _never() -> bool:
    return False
