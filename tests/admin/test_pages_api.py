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
from nerve.assistant.jobs.scheduler import Scheduler
from nerve.assistant.jobs.store import Job, job_store_from_url
from nerve.config import GuardConfig, load_config
from nerve.gateway.guard import ToolGuard
from nerve.gateway.resilience import ManualClock
from nerve.server import build_app
from tests.admin.conftest import CONFIG, LITERAL_KEY, PASSWORD, Harness
from tests.agents.fake_agent import FakeAgent, free_port
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


async def test_safety_page_tries_a_command_and_lists_verdicts(
    admin: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="nerve")  # as `nerve serve` logs (--log-level info)
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
        said = await client.post("/api/process", json={"text": "hello there", "user_id": "ann"})
        checked = await client.post(
            "/api/safety/check", json={"kind": "shell", "content": "ls -la", "cwd": "/srv/app"}
        )
        # A tool call a model returned, let through by the gateway's guard.
        guard = ToolGuard(GuardConfig(), admin.app.pipeline.safety)
        assert await guard.judge("Bash", {"command": "git status"}) is not None
        dropped = await client.post(
            "/api/process", json={"text": "drop the production database", "user_id": "bob"}
        )
        every = (await client.get("/admin/api/safety/verdicts")).json()["verdicts"]
        text = (await client.get("/admin/api/safety/verdicts", params={"kind": "text"})).json()[
            "verdicts"
        ]
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
    assert said.status_code == dropped.status_code == 200
    assert dropped.json()["safety"]["allowed"] is False
    assert checked.json()["allowed"] is True
    assert [(v["source"], v["kind"], v["allowed"]) for v in every] == [
        ("pipeline", "text", False),
        ("guard", "tool_call", True),
        ("api", "shell", True),
        ("pipeline", "text", True),
        ("guard", "tool_call", False),
        ("admin", "sql", True),
        ("admin", "shell", False),
    ]
    assert [(v["subject"], v["user_id"]) for v in text] == [
        ("drop the production database", "bob"),
        ("hello there", "ann"),
    ]
    assert text[0]["reason"] == dropped.json()["safety"]["reason"]
    assert text[1]["intent"] == said.json()["intent"]["intent"]
    assert every[1]["subject"] == "Bash: git status" and every[2]["subject"] == "ls -la"
    assert every[4]["subject"] == "bash" and every[4]["risk_level"] == "critical"
    assert (
        every[6]["subject"] == "rm -rf /"
        and every[6]["reason"] == blocked.json()["verdict"]["reason"]
    )
    assert [v["kind"] for v in refused] == ["text", "tool_call", "shell"]
    assert [v["subject"] for v in shell] == ["ls -la", "rm -rf /"]
    assert [r.status_code for r in bad] == [400] * 5
    assert "'kind' is one of shell, sql, text, action" in bad[0].text


async def test_agents_page_shows_the_registry_and_last_route_results(
    admin: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="nerve")
    agents = admin.app.agents
    with FakeAgent("coder") as fake:
        await agents.register("coder", f"{fake.url}/echo", ["code"])
        await agents.register("writer", f"http://127.0.0.1:{free_port()}/w", ["text"])
        await agents.register("idle", f"{fake.url}/echo", ["none"])
        assert (await agents.route("coder", "code", {"n": 1}))["success"] is True
        assert (await agents.route("writer", "text", {}))["success"] is False
        assert (await agents.route("coder", "review", {"n": 2}))["success"] is True
        async with admin.session() as client:
            data = (await client.get("/admin/api/agents")).json()
    coder, idle, writer = data["agents"]
    assert (coder["agent_name"], coder["successes"], coder["failures"]) == ("coder", 2, 0)
    assert [(r["task"], r["ok"]) for r in coder["recent"]] == [("review", True), ("code", True)]
    assert coder["last_result"]["latency_ms"] >= 0 and coder["last_failure"] is None
    assert (writer["successes"], writer["failures"]) == (0, 1)
    assert "unreachable" in writer["last_failure"]["error"] and writer["last_success"] is None
    assert idle["last_result"] is None and idle["recent"] == []
    assert [(r["agent"], r["task"], r["ok"]) for r in data["results"]] == [
        ("coder", "review", True),
        ("writer", "text", False),
        ("coder", "code", True),
    ]
    assert [f["agent"] for f in data["failures"]] == ["writer"]


async def test_jobs_page_lists_recent_deliveries_late_or_not(
    admin: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="nerve")
    jobs = admin.app.assistant.jobs
    assert jobs is not None
    shown: dict[str, str | None] = {}

    async def deliver(job: Job, late: str | None) -> bool:
        shown[job.id] = late
        return True

    # Another replica's scheduler on the shared store, whose channel can take the firings (no
    # chat of this server's is open: its own scheduler keeps them pending).
    store = jobs.scheduler.store
    replica = Scheduler(store, deliver, can_deliver=lambda channel, chat_id: True)
    now = time.time()
    for id_, due in (("ontime00001", now - 5), ("late0000001", now - 3600)):
        await store.insert(Job(id_, "bob", "web", "tab-1", f"text of {id_}", "notify", None,
                               due, due, None, due - 60))  # fmt: skip
    assert await replica.tick(now) == 2
    async with admin.session() as client:
        listed = (await client.get("/admin/api/jobs")).json()
    assert listed["jobs"] == [] and shown["ontime00001"] is None
    assert str(shown["late0000001"]).startswith("late: was due at")
    late, ontime = sorted(listed["deliveries"], key=lambda d: d["id"])
    assert (late["late"], ontime["late"]) == (True, False)
    assert late["due_at"] == now - 3600 and late["delivered_at"] == now
    assert (late["user_id"], late["channel"], late["chat_id"]) == ("bob", "web", "tab-1")
    assert late["text"] == "text of late0000001" and late["cron"] is None


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


async def test_only_info_lines_carrying_a_record_become_events(
    admin: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="nerve")
    log = logging.getLogger("nerve.agents")
    log.info("agent a did task t", extra={"nerve_record": {"kind": "AGENT_ROUTE", "agent": "a"}})
    log.info("agent b did task t")  # no record: not stored (INFO is not mirrored)
    log.warning("agent c failed task t: x", extra={"nerve_record": {"kind": "AGENT_ROUTE"}})
    async with admin.session() as client:
        events = (await client.get("/admin/api/logs", params={"q": "task t"})).json()["events"]
    assert [(e["kind"], e["message"]) for e in events] == [
        ("AGENT_ROUTE", "agent a did task t"),
        ("WARNING", "agent c failed task t: x"),  # once: the mirror's, not a record too
    ]
    assert events[0]["agent"] == "a" and events[0]["logger"] == "nerve.agents"
