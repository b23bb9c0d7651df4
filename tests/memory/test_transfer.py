"""Export and import (transfer.py) against real stores, on SQLite and on PostgreSQL: a move between
backends is exact, an import is idempotent by id, bad lines are reported by number and lose
nothing (ME-2, ME-3, ME-5)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import BinaryIO

import asyncpg
import orjson
import pytest

from nerve.memory import transfer
from nerve.memory.jsonl import encode_record
from nerve.memory.model import KINDS, Record
from nerve.memory.postgres import PostgresStore
from nerve.memory.service import Memory
from nerve.memory.sqlite import SQLiteStore
from nerve.memory.store import Query
from tests.memory.factories import T0, fact, rec


async def fill(store) -> None:
    """Every kind and field: languages, sessions, recalls, odd numbers, facts with histories."""
    records = [
        rec(user, n, kind=KINDS[n % 5] if KINDS[n % 5] != "fact" else "memory",
            tier=("episodic", "semantic")[n % 2], language=(None, "ta", "hi")[n % 3],
            session_id=(None, f"s{n // 3}")[n % 2], importance=n / 20,
            data={"text": f"note {n} வணக்கம்", "n": [n, 1e16, 0.1, None], "d": {"k": n}})
        for user in ("asha", "bala") for n in range(20)
    ]  # fmt: skip
    await store.put(records)
    await store.touch([records[1].id, records[2].id], T0 + 100)
    await store.touch([records[1].id], T0 + 200)
    for user in ("asha", "bala"):
        for at, value in enumerate(("Chennai", "Madurai", "Chennai")):
            record, change = fact(user, "Alice", "City", value, T0 + at)
            await store.put_fact(record, replace(change, session_id=(None, "s1")[at % 2]))
        await store.put_fact(*fact(user, "alice", "job", "teacher", T0 + 5))


def by_id(records: list[Record]) -> list[Record]:
    return sorted(records, key=lambda r: r.id)


async def contents(store, user: str | None = None) -> tuple[list[Record], list]:
    records = by_id([r async for r in store.scan(user)])
    return records, [c async for c in store.scan_fact_history(user)]


def opened(path: Path, mode: str) -> BinaryIO:
    return open(path, mode)  # the caller's `with` closes it


async def export_to(store, path: Path, user: str | None = None) -> transfer.Exported:
    with opened(path, "wb") as out:
        return await transfer.export(store, out.write, user_id=user)


async def import_from(store, path: Path, **options) -> transfer.Imported:
    with opened(path, "rb") as lines:
        return await transfer.import_lines(store, lines, **options)


@pytest.fixture
async def both(request, tmp_path) -> Iterator[tuple[SQLiteStore, PostgresStore]]:
    dsn, schema = request.getfixturevalue("postgres_schema")
    stores = SQLiteStore(tmp_path / "a.db"), PostgresStore(dsn, schema=f"{schema}_move")
    for store in stores:
        await store.open()
    yield stores
    for store in stores:
        await store.close()
    conn = await asyncpg.connect(dsn)
    await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}_move" CASCADE')
    await conn.close()


@pytest.mark.parametrize("direction", ["sqlite to postgres", "postgres to sqlite"])
async def test_a_move_between_backends_keeps_every_record_and_fact_history_exactly(
    both, tmp_path, direction
):
    source, target = both if direction == "sqlite to postgres" else both[::-1]
    await fill(source)
    exported = await export_to(source, tmp_path / "m.jsonl")
    assert (exported.records, exported.fact_changes) == (44, 8)
    done = await import_from(target, tmp_path / "m.jsonl")
    assert (done.records, done.fact_changes, done.bad, done.lines) == (44, 8, 0, 52)
    assert await contents(target) == await contents(source)
    for user in ("asha", "bala"):
        for attribute in ("city", "job"):
            assert await target.fact_history(user, "ALICE", attribute) == (
                await source.fact_history(user, "alice", attribute)
            )
        assert await target.query(Query(user)) == await source.query(Query(user))


async def test_importing_the_same_file_twice_writes_nothing_the_second_time(store, tmp_path):
    await fill(store)
    await export_to(store, tmp_path / "m.jsonl")
    await store.delete([r.id async for r in store.scan("bala")][:5])  # some missing again
    before = await contents(store)
    versions = await store.version("asha")
    again = await import_from(store, tmp_path / "m.jsonl")
    assert (again.records, again.fact_changes, again.unchanged) == (5, 0, 44 - 5 + 8)
    assert await store.version("asha") == versions  # nothing of asha's was written
    third = await import_from(store, tmp_path / "m.jsonl")
    assert (third.records, third.fact_changes, third.unchanged) == (0, 0, 52)
    after = await contents(store)
    assert len(after[0]) == len(before[0]) + 5 and after[1] == before[1]


async def test_a_record_newer_in_the_store_is_kept_unless_overwrite(store, tmp_path):
    old = rec(n=1, data={"text": "old"})
    await store.put([old])
    await export_to(store, tmp_path / "m.jsonl")
    newer = replace(old, data={"text": "newer"}, text="newer note", updated_at=old.created_at + 5)
    await store.put([newer])
    kept = await import_from(store, tmp_path / "m.jsonl")
    assert (kept.records, kept.kept_newer) == (0, 1)
    assert await store.get([old.id]) == [newer]
    forced = await import_from(store, tmp_path / "m.jsonl", overwrite=True)
    assert (forced.records, forced.kept_newer) == (1, 0)
    assert await store.get([old.id]) == [old]


@pytest.mark.parametrize("batch", [1, 1000])
async def test_the_same_id_twice_in_a_file_the_newer_then_the_later_line_wins(
    store, tmp_path, batch
):
    """In one batch or across batches alike."""
    first = rec(n=1, data={"text": "first"}, updated_at=T0 + 10)
    older = replace(first, data={"text": "older"}, updated_at=T0 + 5)
    tie = replace(first, data={"text": "tie, later"})
    (tmp_path / "m.jsonl").write_bytes(b"".join(map(encode_record, (first, older, tie))))
    done = await import_from(store, tmp_path / "m.jsonl", batch=batch)
    assert done.records + done.duplicates + done.kept_newer == 3  # each line accounted for
    [stored] = await store.get([first.id])
    assert stored.data == {"text": "tie, later"} and stored.text == "tie, later note"


async def test_bad_lines_are_reported_by_number_and_every_good_line_is_imported(store, tmp_path):
    good = [rec(n=i) for i in range(30)]
    lines = [encode_record(r) for r in good]
    for number in range(3, 60, 2):  # 29 bad lines among the good, one blank
        lines.insert(number - 1, b'{"id": "broken"\n')
    lines.insert(7, b"   \n")
    (tmp_path / "m.jsonl").write_bytes(b"".join(lines))
    done = await import_from(store, tmp_path / "m.jsonl", batch=4)
    assert (done.records, done.bad, done.lines) == (30, 29, 60)
    assert len(done.errors) == transfer.MAX_ERRORS
    assert done.errors[0].startswith("line 3: not JSON")
    assert done.errors[1].startswith("line 5: not JSON")
    assert by_id(await store.get([r.id for r in good])) == by_id(good)
    assert transfer.check(lines).bad == 29


async def test_check_reads_every_line_and_writes_nothing(store):
    lines = [encode_record(rec(n=1)), b'{"kind": "memory"}\n', encode_record(rec(n=2))]
    checked = transfer.check(lines)
    assert (checked.bad, checked.lines, checked.errors) == (1, 3, ["line 2: missing 'id'"])
    assert [r async for r in store.scan()] == []


async def test_export_of_one_user_holds_only_their_records_and_history(store, tmp_path):
    await fill(store)
    exported = await export_to(store, tmp_path / "m.jsonl", user="bala")
    assert (exported.records, exported.fact_changes) == (22, 4)
    users = {orjson.loads(x)["user_id"] for x in (tmp_path / "m.jsonl").read_bytes().splitlines()}
    assert users == {"bala"}


async def refuse_id(backend: str, request, tmp_path: Path, record_id: str | None) -> None:
    """A trigger that makes the database refuse to insert `record_id` (None: drop it)."""
    if backend == "sqlite":
        with sqlite3.connect(tmp_path / "memory" / "memory.db") as db:
            db.execute("DROP TRIGGER IF EXISTS refuse")
            if record_id:
                db.execute(f"CREATE TRIGGER refuse BEFORE INSERT ON records WHEN NEW.id = "
                           f"'{record_id}' BEGIN SELECT RAISE(ABORT, 'refused'); END")  # fmt: skip
        return
    dsn, schema = request.getfixturevalue("postgres_schema")
    conn = await asyncpg.connect(dsn, server_settings={"search_path": schema})
    try:
        await conn.execute("DROP TRIGGER IF EXISTS refuse ON records")
        if record_id:
            await conn.execute(
                "CREATE OR REPLACE FUNCTION refuse() RETURNS trigger AS $$ BEGIN IF NEW.id = "
                f"'{record_id}' THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$"
                " LANGUAGE plpgsql"
            )
            await conn.execute(
                "CREATE TRIGGER refuse BEFORE INSERT ON records FOR EACH ROW"
                " EXECUTE FUNCTION refuse()"
            )
    finally:
        await conn.close()


async def test_an_import_the_store_refuses_keeps_its_committed_batches_and_can_run_again(
    store, backend, request, tmp_path
):
    records = [rec(n=i) for i in range(10)]
    (tmp_path / "m.jsonl").write_bytes(b"".join(map(encode_record, records)))
    await refuse_id(backend, request, tmp_path, records[7].id)  # line 8, in the third batch
    with pytest.raises(transfer.ImportStopped) as stopped:
        await import_from(store, tmp_path / "m.jsonl", batch=3)
    assert stopped.value.message.startswith("the store failed on the batch from line 7: ")
    assert "the lines before line 7 are imported; running the import again is safe" in (
        stopped.value.message
    )
    assert sorted([r.id async for r in store.scan()]) == sorted(r.id for r in records[:6])
    await refuse_id(backend, request, tmp_path, None)
    again = await import_from(store, tmp_path / "m.jsonl", batch=3)
    assert (again.records, again.unchanged) == (4, 6)
    assert by_id(await store.get([r.id for r in records])) == by_id(records)


async def test_a_search_cache_in_another_process_sees_what_an_import_wrote(reopen, tmp_path):
    """The import writes through the store, raising the user's version: a warm cache notices."""
    memory = Memory(reopen())
    await memory.open()
    await memory.store_memory("asha", tier="episodic", intent="note", data={"text": "tea"},
                              importance=0.9)  # fmt: skip
    assert [r.record.data["text"] for r in await memory.recall("asha", query="dosa")] == []
    (tmp_path / "m.jsonl").write_bytes(encode_record(rec("asha", 1, data={"text": "dosa"})))
    importer = reopen()
    await importer.open()
    await import_from(importer, tmp_path / "m.jsonl")
    found = await memory.recall("asha", query="dosa", touch=False)
    assert [r.record.data["text"] for r in found] == ["dosa"]
    await memory.close()
