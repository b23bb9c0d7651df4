"""One admin across real `nerve serve` processes (SPEC AD-2, AD-4, ST): an admin token from
replica A is accepted by B, a logout on A is refused by B, and the logs view of A, of B and of
each of two workers is the same shared list, B's traffic included.

Replicas run in working directories of their own, on one store: PostgreSQL (events in its
`event_log` table), or one SQLite file (events in the JSONL file beside it). Processes are ready
when /health answers; other replicas' events show once their flusher ran (~1 s), which the tests
wait for under a deadline.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest

from tests.fakes.upstream import FakeUpstream
from tests.gateway.conftest import redis_prefix, redis_url  # noqa: F401 - fixtures
from tests.processes import Replica

PASSWORD = "replicas-share-this-password"
CHAT = {"model": "auto", "messages": [{"role": "user", "content": "hello"}]}
JSON = {"content-type": "application/json"}


def config(upstream: FakeUpstream, storage_url: str, **extra: Any) -> dict[str, Any]:
    provider = {"name": "primary", "protocol": "openai", "base_url": upstream.openai_base_url,
                "api_key": "sk-test"}  # fmt: skip
    return {"providers": [provider], "routes": [{"name": "default",
            "model": {"provider": "primary", "model": "m1"}}],
            "storage": {"url": storage_url}, "memory": {"enabled": False},
            "probes": {"interval_seconds": 0}, "server": {"config_poll_seconds": 0},
            **extra}  # fmt: skip


async def logs(client: httpx.AsyncClient, url: str, token: str) -> list[dict[str, Any]]:
    response = await client.get(
        f"{url}/admin/api/logs", params={"limit": "2000"}, headers={"x-nerve-admin-token": token}
    )
    assert response.status_code == 200, response.text
    return list(response.json()["events"])


def calls_by(view: list[dict[str, Any]]) -> set[int]:
    return {e["pid"] for e in view if e["kind"] == "CALL"}


async def one_admin_on_two_replicas(a: Replica, b: Replica, password: str) -> None:
    async with httpx.AsyncClient(timeout=10) as client:
        login = await client.post(f"{a.url}/admin/api/login", json={"password": password})
        assert login.status_code == 200, login.text
        token = login.json()["token"]
        header = {"x-nerve-admin-token": token}
        assert (await client.get(f"{b.url}/admin/api/session", headers=header)).status_code == 200

        for replica in (a, b):  # traffic through both
            chat = await client.post(f"{replica.url}/v1/chat/completions", json=CHAT)
            assert chat.status_code == 200, chat.text
        deadline = time.monotonic() + 15
        while calls_by(view_a := await logs(client, a.url, token)) != {a.proc.pid, b.proc.pid}:
            assert time.monotonic() < deadline, f"B's CALL never reached A's view: {view_a}"
        view_b = await logs(client, b.url, token)
        assert view_b[: len(view_a)] == view_a  # the same list, numbered alike
        seqs = [e["seq"] for e in view_b]
        assert seqs == sorted(set(seqs))
        logins = [e for e in view_b if e["kind"] == "AUTH_LOGIN"]
        assert [(e["ok"], e["pid"]) for e in logins] == [(True, a.proc.pid)]

        out = await client.post(f"{a.url}/admin/api/logout", json={}, headers=header)
        assert out.status_code == 200
        refused = await client.get(f"{b.url}/admin/api/session", headers=header)
        assert refused.status_code == 401
        assert refused.json()["error"]["code"] == "login_required"
        assert (await client.post(f"{b.url}/stats/reset", headers=header)).status_code == 401
        again = await client.post(f"{b.url}/admin/api/login", json={"password": password})
        assert again.status_code == 200
        view = await logs(client, b.url, again.json()["token"])
        assert [e["kind"] for e in view if e["kind"].startswith("AUTH_")][-3:] == [
            "AUTH_LOGIN", "AUTH_LOGOUT", "AUTH_LOGIN"
        ]  # fmt: skip


@pytest.fixture
async def postgres_url(postgres_schema: tuple[str, str]) -> str:
    dsn, schema = postgres_schema
    conn = await asyncpg.connect(dsn)
    await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    await conn.close()
    return f"{dsn}?schema={schema}"


async def test_replicas_on_postgresql_share_sessions_and_logs(
    spawn, upstream: FakeUpstream, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NERVE_ADMIN_PASSWORD", PASSWORD)
    a, b = spawn(config(upstream, postgres_url), count=2)
    await one_admin_on_two_replicas(a, b, PASSWORD)


async def test_replicas_on_one_sqlite_file_share_a_generated_password_sessions_and_logs(
    spawn, upstream: FakeUpstream, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Different working directories, one database file: the password one replica generated
    (and printed) works on both; the events file is the one beside the database."""
    monkeypatch.delenv("NERVE_ADMIN_PASSWORD", raising=False)
    url = f"sqlite:///{tmp_path / 'shared' / 'nerve.db'}"  # a brand-new file, opened by both
    a, b = spawn(config(upstream, url), count=2)
    printed = [line for r in (a, b) for line in r.log if "generated the admin password" in line]
    assert len(printed) == 1, printed
    password = printed[0].split("password ")[1].split(" ")[0]
    await one_admin_on_two_replicas(a, b, password)
    assert (tmp_path / "shared" / "events.jsonl").exists()
    assert not (tmp_path / "r0" / ".nerve" / "events.jsonl").exists()


async def test_two_workers_show_one_logs_view(
    redis_prefix: str,  # noqa: F811 - before spawn: the workers stop before the keys go
    redis_url: str,  # noqa: F811
    spawn,
    upstream: FakeUpstream,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`--workers 2`: logs views answered by each worker hold the same events under the same
    seqs, and a token from one worker works on the other. Each new connection logs in, so the
    AUTH_LOGIN's pid names the worker that answers that connection's logs request."""
    monkeypatch.setenv("NERVE_ADMIN_PASSWORD", PASSWORD)
    url = f"sqlite:///{tmp_path / 'w' / 'nerve.db'}"
    extra = {"redis": {"url": redis_url, "key_prefix": redis_prefix}}
    (server,) = spawn(config(upstream, url, **extra), workers=2)
    first_token = ""
    views: dict[int, list[dict[str, Any]]] = {}
    deadline = time.monotonic() + 30
    while len(views) < 2:
        assert time.monotonic() < deadline, f"only worker(s) {list(views)} answered"
        async with httpx.AsyncClient(timeout=10) as client:  # a new connection: any worker
            login = await client.post(f"{server.url}/admin/api/login", json={"password": PASSWORD})
            assert login.status_code == 200, login.text
            first_token = first_token or login.json()["token"]
            assert (await client.post(f"{server.url}/v1/chat/completions", json=CHAT)).is_success
            view = await logs(client, server.url, first_token)  # the first worker's token
        answered_by = [e for e in view if e["kind"] == "AUTH_LOGIN"][-1]["pid"]
        views.setdefault(answered_by, view)
    earlier, later = views.values()  # in the order they were fetched
    assert later[: len(earlier)] == earlier  # the later view holds the earlier one, seq for seq
    assert {e["pid"] for e in later if e["kind"] == "AUTH_LOGIN"} == set(views)
