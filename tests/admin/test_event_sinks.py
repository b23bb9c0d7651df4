"""The shared event log's sinks (SPEC AD-4, ST): the JSONL file of one machine and PostgreSQL's
`event_log` table, behind one protocol and one set of tests.

`sinks()` makes another sink on the same log, as another worker or replica holds: what one
writes, every other reads, numbered in one sequence that a poller can follow with `after`.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from nerve.events import EventLog, EventSink, EventTable, JsonlFile


@pytest.fixture(params=["jsonl", "postgres"])
async def sinks(
    request: pytest.FixtureRequest, tmp_path: Path, closing: AsyncExitStack
) -> Callable[..., EventSink]:
    """sinks(**options) → an opened-at-first-use sink on this test's (empty) log."""
    if request.param == "postgres":
        dsn, schema = request.getfixturevalue("postgres_schema")
        conn = await asyncpg.connect(dsn)
        await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        await conn.close()

    def make(**options: Any) -> EventSink:
        sink: EventSink
        if request.param == "jsonl":
            sink = JsonlFile(tmp_path / "events.jsonl", **options)
        else:
            sink = EventTable(dsn, schema=schema, **options)
        closing.push_async_callback(sink.close)
        return sink

    return make


def event(kind: str, n: int, **fields: Any) -> dict[str, Any]:
    return {"seq": 0, "ts": "2026-12-01T00:00:00.000Z", "kind": kind, "n": n, **fields}


async def opened(sink: EventSink) -> EventSink:
    await sink.open()
    return sink


async def test_what_one_process_writes_every_other_reads_in_one_sequence(
    sinks: Callable[..., EventSink],
) -> None:
    a, b = await opened(sinks()), await opened(sinks())
    await a.write([event("CALL", 1), event("ERROR", 2, error="upstream 502")])
    await b.write([event("CALL", 3)])
    await a.write([event("AUTH_LOGIN", 4, client="127.0.0.1")])
    for reader in (a, b):
        got = await reader.read(kinds=None, q=None, after=0, limit=100)
        assert [e["n"] for e in got] == [1, 2, 3, 4]
        seqs = [e["seq"] for e in got]
        assert seqs == sorted(set(seqs)) and seqs[0] >= 1
    got = await b.read(kinds=None, q=None, after=0, limit=100)
    assert got[1] == {**event("ERROR", 2, error="upstream 502"), "seq": got[1]["seq"]}


async def test_reads_filter_by_kind_text_and_after_and_keep_the_newest(
    sinks: Callable[..., EventSink],
) -> None:
    sink = await opened(sinks())
    await sink.write(
        [event("CALL" if i % 2 else "ERROR", i, message=f"Number {i}") for i in range(10)]
    )
    every = await sink.read(kinds=None, q=None, after=0, limit=100)
    assert [e["n"] for e in await sink.read(kinds=None, q=None, after=0, limit=3)] == [7, 8, 9]
    calls = await sink.read(kinds={"CALL"}, q=None, after=0, limit=100)
    assert [e["n"] for e in calls] == [1, 3, 5, 7, 9]
    found = await sink.read(kinds={"ERROR", "CALL"}, q="number 4", after=0, limit=100)
    assert [e["n"] for e in found] == [4]
    later = await sink.read(kinds=None, q=None, after=every[5]["seq"], limit=100)
    assert [e["n"] for e in later] == [6, 7, 8, 9]
    assert await sink.read(kinds=None, q=None, after=every[-1]["seq"], limit=100) == []


async def test_a_poller_following_after_sees_every_event_of_concurrent_writers_once(
    sinks: Callable[..., EventSink],
) -> None:
    """ST: batches of three writers interleave; a reader that asks for seq > the last it saw
    never skips a batch that was stored late, nor sees one twice."""
    writers = [await opened(sinks()) for _ in range(3)]
    reader = await opened(sinks())
    seen: list[tuple[int, int]] = []
    done = asyncio.Event()

    async def write(w: int) -> None:
        for batch in range(20):
            await writers[w].write([event("CALL", w * 1000 + batch * 10 + i) for i in range(5)])

    async def poll() -> None:
        after = 0
        while True:
            finished = done.is_set()
            for e in await reader.read(kinds=None, q=None, after=after, limit=10_000):
                seen.append((e["seq"], e["n"]))
                after = e["seq"]
            if finished:
                return
            await asyncio.sleep(0)  # let the writers run between polls

    polling = asyncio.create_task(poll())
    await asyncio.gather(*(write(w) for w in range(3)))
    done.set()
    await polling
    assert len(seen) == 300 and len({n for _, n in seen}) == 300
    assert [s for s, _ in seen] == sorted({s for s, _ in seen})


async def test_an_event_log_numbers_its_events_as_the_sink_stores_them(
    sinks: Callable[..., EventSink],
) -> None:
    """Two EventLogs (two processes) on one log: the list is the same from either, and an
    event's seq is known once stored."""
    one, two = EventLog(sinks(), flush_interval=3600), EventLog(sinks(), flush_interval=3600)
    await one.open()
    await two.open()
    try:
        first = one.emit("CALL", route="a")
        second = await two.record("AUTH_LOGIN", ok=True)
        assert second["seq"] > 0
        assert await one.recent() == await two.recent()  # reading stores one's buffer first
        assert [e["kind"] for e in await two.recent()] == ["AUTH_LOGIN", "CALL"]
        assert first["seq"] > second["seq"]
    finally:
        await one.close()
        await two.close()


async def test_the_file_rotates_once_full_and_numbering_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    a, b = JsonlFile(path, max_bytes=400), JsonlFile(path, max_bytes=400)
    for i in range(12):
        await (a if i % 3 else b).write([event("AUTH_LOGIN", i, client="127.0.0.1")])
    assert path.with_name("events.jsonl.1").exists()
    got = await a.read(kinds=None, q=None, after=0, limit=100)
    assert [e["seq"] for e in got] == list(range(got[0]["seq"], 13))  # both generations
    assert got[-1]["n"] == 11


async def test_a_line_cut_by_a_crash_is_skipped_and_the_next_batch_starts_a_new_line(
    tmp_path: Path,
) -> None:
    path = tmp_path / "events.jsonl"
    sink = JsonlFile(path)
    await sink.write([event("CALL", 1)])
    with path.open("ab") as f:
        f.write(b'{"seq":2,"ts":"2026-12-01T00:00:00.000Z","kind":"CA')  # the crash
    reader = JsonlFile(path)
    assert [e["n"] for e in await reader.read(kinds=None, q=None, after=0, limit=10)] == [1]
    await reader.write([event("CALL", 3)])
    got = await sink.read(kinds=None, q=None, after=0, limit=10)
    assert [(e["seq"], e["n"]) for e in got] == [(1, 1), (2, 3)]


async def test_a_scan_stops_after_its_byte_budget(tmp_path: Path) -> None:
    """A filter that matches nothing reads at most `scan_bytes` of the file, not all of it."""
    sink = JsonlFile(tmp_path / "events.jsonl", scan_bytes=10_000)
    await sink.write([event("ERROR", 0, message="the only error")])
    await sink.write([event("CALL", i, message="x" * 200) for i in range(1, 500)])
    assert await sink.read(kinds={"ERROR"}, q=None, after=0, limit=10) == []
    wide = JsonlFile(tmp_path / "events.jsonl")
    assert [e["n"] for e in await wide.read(kinds={"ERROR"}, q=None, after=0, limit=10)] == [0]


WRITER = """
import sys
from pathlib import Path
from nerve.events import JsonlFile
sink = JsonlFile(Path(sys.argv[1]), max_bytes=int(sys.argv[3]))
sys.stdin.readline()  # start together
for batch in range(100):
    sink.append([{"seq": 0, "kind": "CALL", "w": sys.argv[2], "i": batch * 3 + k}
                 for k in range(3)])
"""


def test_real_processes_appending_at_once_number_every_line_once(tmp_path: Path) -> None:
    """ST: three processes, 300 batches, rotations on the way: every seq is unique and the
    seqs increase down the files, whichever process wrote a line."""
    path = tmp_path / "events.jsonl"
    command = [sys.executable, "-c", WRITER, str(path)]
    procs = [
        subprocess.Popen([*command, str(w), "15000"], stdin=subprocess.PIPE, text=True)
        for w in range(3)
    ]
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.close()
    deadline = time.monotonic() + 60
    for proc in procs:
        assert proc.wait(timeout=max(1, deadline - time.monotonic())) == 0
    lines = []
    for generation in (path.with_name("events.jsonl.1"), path):
        if generation.exists():
            lines += [json.loads(line) for line in generation.read_text().splitlines()]
    seqs = [e["seq"] for e in lines]
    assert seqs == list(range(seqs[0], 901))  # no gap, no repeat, in file order, up to 900
    assert seqs[0] > 1, "the writers should have rotated the file on the way"
    assert len({(e["w"], e["i"]) for e in lines}) == len(lines)  # each batch written once
    assert os.stat(path).st_size <= 15000 + 1000


async def test_the_table_keeps_the_newest_rows_and_drops_old_ones(
    postgres_schema: tuple[str, str],
) -> None:
    dsn, schema = postgres_schema
    conn = await asyncpg.connect(dsn)
    await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    await conn.close()
    now = [1_000_000.0]
    table = EventTable(dsn, schema=schema, keep_rows=5, keep_seconds=100, clock=lambda: now[0])
    await table.open()
    try:
        await table.write([event("CALL", i) for i in range(8)])  # pruned on the first write
        got = await table.read(kinds=None, q=None, after=0, limit=100)
        assert [e["n"] for e in got] == [3, 4, 5, 6, 7]
        now[0] += 50
        await table.write([event("CALL", 8)])
        now[0] += 60  # the first batch is now 110 s old, the second 60 s
        assert await table.prune(now[0]) == 5
        assert [e["n"] for e in await table.read(kinds=None, q=None, after=0, limit=100)] == [8]
    finally:
        await table.close()
