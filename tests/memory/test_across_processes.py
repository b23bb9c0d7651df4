"""One nerve, however many processes (SPEC ME-2, ME-3, ME-8; DESIGN "State and scale"): real
`nerve serve`, `nerve mcp` and `nerve memory` processes on one store, SQLite file or PostgreSQL,
see each other's writes and deletions at once; a killed replica loses no acknowledged write."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from nerve.memory.backends import store_from_url
from nerve.memory.store import Query

TIMEOUT = 60


@pytest.fixture
def shared_url(backend: str, storage_url: str, tmp_path: Path) -> str:
    """One database for every process of the test: an absolute SQLite path (each process runs
    in a working directory of its own), or this test's PostgreSQL schema."""
    return f"sqlite:///{tmp_path / 'shared' / 'nerve.db'}" if backend == "sqlite" else storage_url


def config(url: str) -> dict[str, Any]:
    return {"storage": {"url": url}, "probes": {"interval_seconds": 0}}


def remember(url: str, text: str, user: str = "asha") -> str:
    body = {"user_id": user, "tier": "semantic", "intent": "note", "data": {"text": text},
            "importance": 0.8}  # fmt: skip
    reply = httpx.post(f"{url}/api/memory/store", json=body, timeout=10)
    assert reply.status_code == 200, reply.text
    return str(reply.json()["id"])


def search(url: str, query: str, user: str = "asha") -> list[str]:
    body = {"user_id": user, "query": query}
    reply = httpx.post(f"{url}/api/memory/recall", json=body, timeout=10)
    assert reply.status_code == 200, reply.text
    return [r["data"]["text"] for r in reply.json()["records"]]


def context_block(url: str, query: str, user: str = "asha") -> str:
    reply = httpx.post(
        f"{url}/api/memory/context", json={"user_id": user, "query": query}, timeout=10
    )
    assert reply.status_code == 200, reply.text
    return str(reply.json()["prompt_block"])


async def test_memory_stored_through_nerve_mcp_and_the_cli_is_found_by_nerve_serve(
    spawn, shared_url: str, tmp_path: Path
):
    """What Cursor runs (`nerve mcp`, driven by the MCP SDK client) and `nerve memory store`
    write; the `nerve serve` beside them finds both by query, without a restart."""
    (server,) = spawn(config(shared_url))
    assert search(server.url, "coffee") == []  # the server has looked before the writes
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "nerve", "mcp", "--config", str(tmp_path / "nerve.yaml")],
        env={**os.environ, "NERVE_ADMIN_PASSWORD": "x"},
        cwd=tmp_path,
    )
    with (tmp_path / "mcp.log").open("w") as errlog:
        async with (
            asyncio.timeout(TIMEOUT),
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            stored = await session.call_tool("store_memory", {
                "user_id": "asha", "intent": "preference", "tier": "semantic",
                "data": {"text": "likes filter coffee"}, "importance_score": 0.9})  # fmt: skip
    assert stored.structured_content is not None and stored.structured_content["stored"]
    assert search(server.url, "coffee") == ["likes filter coffee"]
    assert "likes filter coffee" in context_block(server.url, "coffee")
    cli = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "nerve", "memory", "store", "--user", "asha", "--intent", "note",
         "--data", '{"text": "deploys go through the kestrel pipeline"}', "--importance", "0.7",
         "--config", str(tmp_path / "nerve.yaml")],
        cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT, check=False,
    )  # fmt: skip
    assert cli.returncode == 0, cli.stderr
    assert search(server.url, "kestrel pipeline") == ["deploys go through the kestrel pipeline"]


def test_two_replicas_see_each_others_writes_and_deletions_at_once(spawn, shared_url: str):
    a, b = spawn(config(shared_url), count=2)
    assert search(b.url, "release") == []  # b holds a (now stale) index of asha
    first = remember(a.url, "the release train leaves on fridays")
    assert search(b.url, "release train") == ["the release train leaves on fridays"]
    remember(b.url, "the release checklist lives in the wiki")
    assert sorted(search(a.url, "release")) == [
        "the release checklist lives in the wiki",
        "the release train leaves on fridays",
    ]
    assert httpx.delete(f"{a.url}/api/memory/{first}", timeout=10).status_code == 200
    assert search(b.url, "release") == ["the release checklist lives in the wiki"]
    assert httpx.delete(f"{b.url}/api/memory/users/asha", timeout=10).json()["deleted"] == 1
    assert search(a.url, "release") == []


async def test_a_killed_replica_whose_working_directory_is_gone_loses_no_acknowledged_write(
    spawn, shared_url: str, tmp_path: Path
):
    """kill -9 mid-load, then its working directory deleted: every write it acknowledged is in
    the store (PostgreSQL, or the SQLite file outside it); none waited on the replica's disk."""
    (doomed,) = spawn(config(shared_url))
    acknowledged: list[str] = []

    async def writer(client: httpx.AsyncClient, w: int) -> None:
        for i in range(10_000):
            body = {"user_id": f"w{w}", "tier": "episodic", "intent": "note",
                    "data": {"text": f"write {w}-{i}"}, "importance": 0.5}  # fmt: skip
            try:
                reply = await client.post(f"{doomed.url}/api/memory/store", json=body)
            except httpx.TransportError:
                return  # killed: this write was never acknowledged
            assert reply.status_code == 200
            acknowledged.append(reply.json()["id"])
            if len(acknowledged) == 300:
                doomed.kill()  # while the other writers' requests are in flight

    async with httpx.AsyncClient(timeout=30) as client:
        await asyncio.wait_for(asyncio.gather(*(writer(client, w) for w in range(16))), 120)
    shutil.rmtree(tmp_path / "r0")
    assert len(acknowledged) >= 300
    store = store_from_url(shared_url)
    await store.open()
    try:
        found = {r.id for r in await store.get(acknowledged)}
        assert found == set(acknowledged)
        assert sum([len(await store.query(Query(f"w{w}"))) for w in range(16)]) >= 300
    finally:
        await store.close()


def test_stored_records_round_trip_the_same_on_every_process(spawn, shared_url: str):
    """The record a replica returns for a search is the one another replica stored, field by
    field (no process keeps a copy of its own)."""
    a, b = spawn(config(shared_url), count=2)
    record_id = remember(a.url, "the office wifi is kestrel-5g")
    body = {"user_id": "asha", "query": "wifi"}
    mine = httpx.post(f"{a.url}/api/memory/recall", json=body, timeout=10).json()["records"]
    theirs = httpx.post(f"{b.url}/api/memory/recall", json=body, timeout=10).json()["records"]
    assert [r["id"] for r in theirs] == [record_id]
    assert _stored_fields(mine) == _stored_fields(theirs)


def _stored_fields(records: list[dict[str, Any]]) -> list[bytes]:
    """What was stored, without what a recall itself changes (its score, access statistics)."""
    moving = ("score", "accessed_at", "access_count")
    return [orjson.dumps({k: v for k, v in r.items() if k not in moving}) for r in records]
