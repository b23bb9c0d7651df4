"""The write-ahead log in front of a memory store (ME-8): durable acks, torn frames, encryption,
group commit, batches applied exactly once, and kill -9 at any point losing no acknowledged write.

A "crash copy" is what a kill -9 at that moment leaves: the WAL files and the store's committed
state, copied while nothing is in flight. The kill -9 tests kill a real process
(tests/memory/crash_writer.py) writing through a WalStore over the SQLite store.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import signal
import zlib
from dataclasses import replace
from pathlib import Path

import pytest

from nerve.errors import ConfigError
from nerve.memory.model import FactChange, Record, fact_id
from nerve.memory.store import MemoryStore, Query
from nerve.memory.wal import WalStore, WriteAheadLog
from tests.memory import crash_writer as cw
from tests.memory.memstore import MemStore, StoreDown

ROOT = Path(__file__).resolve().parents[2]
KEY = bytes(range(32))
NEVER = {"flush_records": 10**9, "flush_interval": 3600.0}  # applied only when asked


def rec(n: int, user: str = "u1", **fields: object) -> Record:
    return Record.make(
        id=f"id{n}", user_id=user, tier="episodic", intent="note", data={"n": n, "f": n / 3},
        importance=0.5, created_at=1000.0 + n, **fields,
    )  # fmt: skip


def fact(user: str, entity: str, value: str, at: float) -> tuple[Record, FactChange]:
    record = Record.make(
        id=fact_id(user, entity, "city"), user_id=user, tier="semantic", intent="fact",
        kind="fact", data={"entity": entity, "value": value}, importance=0.9, created_at=at,
    )  # fmt: skip
    return record, FactChange(user, entity, "city", value, "s1", at)


def size(path: Path) -> int:
    return path.stat().st_size


def log_files(directory: Path) -> list[str]:
    return [p.name for p in directory.iterdir() if p.name.startswith("memory.wal")]


async def write_log(path: Path, payloads: list[bytes], key: bytes | None = None) -> list[int]:
    """A closed WAL at `path` holding `payloads`; the file's size after each."""
    wal = WriteAheadLog(path, key=key)
    await wal.open()
    sizes = []
    for payload in payloads:
        await wal.append(payload)
        sizes.append(size(path))
    await wal.close()
    return sizes


async def read_log(path: Path, key: bytes | None = None) -> list[list[bytes]]:
    wal = WriteAheadLog(path, key=key)
    segments = await wal.open()
    await wal.close()
    return [segment.payloads for segment in segments]


# -- the log file ------------------------------------------------------------------------------


@pytest.mark.parametrize("key", [None, KEY], ids=["plain", "encrypted"])
async def test_a_torn_last_frame_is_dropped_at_every_byte_offset_and_earlier_frames_kept(
    tmp_path: Path, key: bytes | None, caplog: pytest.LogCaptureFixture
) -> None:
    """ME-8: a write cut at any byte is truncated on open, logged with its offset, never
    replayed; every frame before it survives."""
    payloads = [b'{"op":"a"}', b'{"op":"b"}' * 20, b'{"op":"c","n":12345}']
    sizes = await write_log(tmp_path / "whole" / "memory.wal", payloads, key)
    data = (tmp_path / "whole" / "memory.wal").read_bytes()
    for cut in range(sizes[-2], sizes[-1]):
        path = tmp_path / f"cut{cut}" / "memory.wal"
        path.parent.mkdir()
        path.write_bytes(data[:cut])
        caplog.clear()
        assert await read_log(path, key) == [payloads[:2]]
        assert [p.stat().st_size for p in path.parent.iterdir()] == [sizes[-2]]
        assert (f"at offset {sizes[-2]}" in caplog.text) == (cut > sizes[-2])


@pytest.mark.parametrize("key", [None, KEY], ids=["bad-crc", "bad-decrypt"])
async def test_a_last_frame_that_fails_its_check_is_dropped_not_replayed(
    tmp_path: Path, key: bytes | None, caplog: pytest.LogCaptureFixture
) -> None:
    """ME-8: a bad checksum, or (encrypted) a frame that does not decrypt though its checksum
    matches, ends the log there."""
    path = tmp_path / "memory.wal"
    sizes = await write_log(path, [b'{"op":"a"}', b'{"op":"b"}'], key)
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    if key is not None:  # keep the crc right: only decryption can notice
        data[sizes[0] + 4 : sizes[0] + 8] = zlib.crc32(data[sizes[0] + 8 :]).to_bytes(4, "little")
    path.write_bytes(bytes(data))
    assert await read_log(path, key) == [[b'{"op":"a"}']]
    assert "does not decrypt" in caplog.text if key else "bad checksum" in caplog.text


async def test_a_wrong_or_missing_key_is_refused_at_open_naming_the_file(tmp_path: Path) -> None:
    """ME-8: the wrong key is a clear error naming the file, never garbage or a truncation."""
    path = tmp_path / "memory.wal"
    await write_log(path, [b'{"secret":"vanakkam"}'], KEY)
    assert b"vanakkam" not in path.read_bytes()
    with pytest.raises(ConfigError, match=re.escape(str(path)) + ".*different key"):
        await WriteAheadLog(path, key=bytes(32)).open()
    with pytest.raises(ConfigError, match=re.escape(str(path)) + ".*NERVE_WAL_KEY"):
        await WriteAheadLog(path).open()
    assert await read_log(path, KEY) == [[b'{"secret":"vanakkam"}']]


async def test_an_append_is_acknowledged_only_after_its_frame_is_written_and_synced(
    tmp_path: Path,
) -> None:
    """ME-8: when the future resolves, the frame is in the file and its fdatasync returned."""
    wal = WriteAheadLog(tmp_path / "memory.wal")
    await wal.open()
    empty = size(tmp_path / "memory.wal")
    await wal.append(b'{"op":"x"}')
    assert (size(tmp_path / "memory.wal"), wal.syncs) == (empty + 8 + 10, 1)
    await wal.close()


async def test_appends_that_arrive_together_share_one_fsync(tmp_path: Path) -> None:
    """ME-8 group commit: writers queued while a commit runs share the next fsync."""
    wal = WriteAheadLog(tmp_path / "memory.wal")
    await wal.open()
    await asyncio.gather(*(wal.append(b"%d" % i) for i in range(500)))
    assert (wal.frames, wal.syncs) == (500, 1)
    await wal.close()
    assert await read_log(tmp_path / "memory.wal") == [[b"%d" % i for i in range(500)]]


async def test_seal_splits_the_log_exactly_where_it_was_called(tmp_path: Path) -> None:
    """ME-8: appends queued before `seal` land in the sealed segment, later ones in the next."""
    wal = WriteAheadLog(tmp_path / "memory.wal")
    await wal.open()
    queued = [wal.append(b"a"), wal.append(b"b")]
    seq = await wal.seal()
    await asyncio.gather(*queued, wal.append(b"c"))
    await wal.close()
    segments = WriteAheadLog(tmp_path / "memory.wal")
    found = await segments.open()
    await segments.close()
    assert [(s.seq, s.payloads) for s in found] == [(seq, [b"a", b"b"]), (seq + 1, [b"c"])]


# -- WalStore over a store ---------------------------------------------------------------------


@pytest.fixture(params=["memstore", "sqlite"])
def inner(request: pytest.FixtureRequest, tmp_path: Path) -> MemoryStore:
    if request.param == "memstore":
        return MemStore()
    from nerve.memory.sqlite import SQLiteStore

    return SQLiteStore(tmp_path / "memory.db")


async def test_reads_see_every_acknowledged_write_without_waiting_for_a_flush(
    inner: MemoryStore, tmp_path: Path
) -> None:
    """ME-8 read-your-writes: get, query, fact_history and scan apply what was acknowledged."""
    store = WalStore(inner, WriteAheadLog(tmp_path / "memory.wal"), **NEVER)
    await store.open()
    await store.put([rec(1), rec(2)])
    await store.touch(["id1"], 50.0)
    await store.put_fact(*fact("u1", "Home", "Pune", 7.0))
    await store.replace_with_summary(["id2"], rec(3, kind="summary"))
    assert [(r.id, r.access_count, r.accessed_at) for r in await store.get(["id1"])] == [
        ("id1", 1, 50.0)
    ]
    assert [r.id for r in await store.query(Query("u1", kind="summary"))] == ["id3"]
    assert [c.value for c in await store.fact_history("u1", "home", "city")] == ["Pune"]
    assert sorted([r.id async for r in store.scan("u1")]) == sorted(
        ["id1", "id3", fact_id("u1", "Home", "city")]
    )
    await store.close()


async def test_deletes_return_how_many_existed_counting_unflushed_writes(
    inner: MemoryStore, tmp_path: Path
) -> None:
    """ME-8: delete and delete_user wait for their batch, so their counts are the store's."""
    store = WalStore(inner, WriteAheadLog(tmp_path / "memory.wal"), **NEVER)
    await store.open()
    await store.put([rec(1), rec(2), rec(3, user="u2")])
    assert await store.delete(["id1", "id2", "nope"]) == 2
    assert await store.delete_user("u2") == 1
    assert await store.delete([]) == 0
    await store.close()


async def test_close_applies_everything_and_leaves_no_log_behind(
    inner: MemoryStore, tmp_path: Path
) -> None:
    """ME-8: close flushes and checkpoints; reopening has nothing to replay."""
    store = WalStore(inner, WriteAheadLog(tmp_path / "memory.wal", key=KEY), **NEVER)
    await store.open()
    await store.open()  # a no-op, as for every store
    await asyncio.gather(*(store.put([rec(n)]) for n in range(50)))
    await store.close()
    assert log_files(tmp_path) == []
    again = WalStore(inner, WriteAheadLog(tmp_path / "memory.wal", key=KEY))
    await again.open()
    assert again.replayed == 0 and len(await again.get([f"id{n}" for n in range(50)])) == 50
    await again.close()


async def test_many_concurrent_writers_share_fsyncs(tmp_path: Path) -> None:
    """ME-8 group commit: 300 concurrent puts are acknowledged by far fewer fsyncs."""
    wal = WriteAheadLog(tmp_path / "memory.wal")
    store = WalStore(MemStore(), wal, **NEVER)
    await store.open()
    await asyncio.gather(*(store.put([rec(n)]) for n in range(300)))
    assert wal.frames == 300 and wal.syncs <= 3
    assert len(await store.get([f"id{n}" for n in range(300)])) == 300
    await store.close()


@pytest.mark.parametrize(
    ("settings", "writes"),
    [({"flush_records": 10, "flush_interval": 3600.0}, 10), ({"flush_interval": 0.01}, 1)],
    ids=["full-buffer", "interval"],
)
async def test_acknowledged_writes_reach_the_store_without_any_read(
    tmp_path: Path, settings: dict[str, float], writes: int
) -> None:
    """ME-8: a full buffer, or the flush interval, applies the batch on its own."""
    inner, applied = MemStore(), asyncio.Event()
    inner.on_commit = applied.set
    store = WalStore(inner, WriteAheadLog(tmp_path / "memory.wal"), **settings)
    await store.open()
    await asyncio.gather(*(store.put([rec(n)]) for n in range(writes)))
    await asyncio.wait_for(applied.wait(), 10)
    assert len(inner.records) == writes
    await store.close()


async def test_a_write_the_store_would_refuse_fails_before_it_is_acknowledged(
    tmp_path: Path,
) -> None:
    """ME-8: NUL characters and non-finite numbers are refused up front, so they can never
    block a flush or a replay; the log stays usable."""
    wal = WriteAheadLog(tmp_path / "memory.wal")
    store = WalStore(MemStore(), wal, **NEVER)
    await store.open()
    for bad in (rec(1, language="t\x00a"), replace(rec(1), importance=float("nan"))):
        with pytest.raises(ValueError):
            await store.put([bad])
    with pytest.raises(ValueError):
        await store.touch(["id1"], float("inf"))
    await store.put([rec(2)])
    assert wal.frames == 1
    await store.close()


async def test_a_reader_cancelled_mid_flush_leaves_nothing_to_apply_twice(tmp_path: Path) -> None:
    """ME-8: the flush a cancelled read started still finishes, and its segment is dropped once
    applied, so a touch is neither lost nor replayed at the next open."""
    inner = MemStore()
    store = WalStore(inner, WriteAheadLog(tmp_path / "memory.wal"), **NEVER)
    await store.open()
    await store.put([rec(1)])
    await store.touch(["id1"], 9.0)
    reader = asyncio.create_task(store.get(["id1"]))
    await asyncio.sleep(0)  # one turn of the loop (not a wait): the read has started its flush
    reader.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reader
    await store.touch(["id1"], 10.0)
    await store.close()
    assert log_files(tmp_path) == []
    again = WalStore(inner, WriteAheadLog(tmp_path / "memory.wal"))
    await again.open()
    assert again.replayed == 0
    assert [(r.access_count, r.accessed_at) for r in await again.get(["id1"])] == [(2, 10.0)]
    await again.close()


async def script(store: MemoryStore) -> None:
    """Every kind of write, the counted deletes first (they flush), the rest left in the WAL."""
    await store.put([rec(n) for n in range(6)] + [rec(9, user="u2")])
    await store.delete(["id5", "missing"])
    await store.delete_user("u2")  # from here on, one batch: nothing below forces a flush
    await store.put([replace(rec(0), data={"v": [1, 2.5, None, "வணக்கம்"]})])
    await store.touch(["id0", "id1", "id3", "missing"], 100.5)
    await store.touch(["id0"], 200.25)
    await store.put_fact(*fact("u1", "Home", "Pune", 10.0))
    await store.put_fact(*fact("u1", "home ", "Chennai", 11.0))
    await store.replace_with_summary(["id1", "id2"], rec(7, kind="summary"))
    await store.touch(["id7", "id3"], 300.0)
    await store.touch(["id3"], 400.0)
    await store.put([rec(8)])


async def reference() -> MemStore:
    direct = MemStore()
    await script(direct)
    return direct


def crash_copy(wal_dir: Path, inner: MemStore, to: Path) -> tuple[Path, MemStore]:
    shutil.copytree(wal_dir, to)
    return to / "memory.wal", inner.copy()


async def test_every_kind_of_write_survives_a_crash_exactly(tmp_path: Path) -> None:
    """ME-8: records and fact changes round-trip exactly through the WAL's replay."""
    inner = MemStore()
    store = WalStore(inner, WriteAheadLog(tmp_path / "wal" / "memory.wal"), **NEVER)
    await store.open()
    await script(store)
    path, survivor = crash_copy(tmp_path / "wal", inner, tmp_path / "crash")
    replayed = WalStore(survivor, WriteAheadLog(path))
    await replayed.open()
    assert replayed.replayed == 9  # everything after the last delete
    await replayed.close()
    assert survivor.snapshot() == (await reference()).snapshot()
    await store.close()
    assert inner.snapshot() == survivor.snapshot()


async def test_a_batch_cut_short_at_any_store_write_is_applied_exactly_once(
    tmp_path: Path,
) -> None:
    """ME-8 checkpoint atomicity: however many of a batch's store writes committed before a
    crash (or an outage), replaying it, or retrying it, neither loses a write nor applies a
    touch or a fact change twice."""
    expected = (await reference()).snapshot()
    for committed in range(30):
        inner = MemStore()
        wal_dir = tmp_path / f"run{committed}"
        store = WalStore(inner, WriteAheadLog(wal_dir / "memory.wal", key=KEY), **NEVER)
        await store.open()
        await script(store)
        inner.writes_left = committed
        try:
            await store.flush()
        except StoreDown:
            pass
        else:
            assert committed > 3 and inner.snapshot() == expected
            await store.close()
            return
        path, survivor = crash_copy(wal_dir, inner, tmp_path / f"crash{committed}")
        replayed = WalStore(survivor, WriteAheadLog(path, key=KEY))
        await replayed.open()
        await replayed.close()
        assert survivor.snapshot() == expected, f"replay after {committed} store writes"
        inner.writes_left = None
        await store.close()  # the same process retries the batch once the store is back
        assert inner.snapshot() == expected, f"retry after {committed} store writes"
    raise AssertionError("the batch never completed")


# -- kill -9 -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("acks", "key"), [(50, None), (500, KEY), (3000, None)], ids=["50", "500-encrypted", "3000"]
)
async def test_kill_9_right_after_n_acknowledgements_loses_no_acknowledged_write(
    tmp_path: Path, acks: int, key: bytes | None
) -> None:
    """ME-8: a writer process killed with SIGKILL the moment its n-th ack is read; everything
    it acknowledged is in the store after replay, exactly as written."""
    lines, code = await cw.run(tmp_path, kill_after=acks, key=key)
    assert code == -signal.SIGKILL
    assert sum(not line.startswith("d ") for line in lines) >= acks
    await cw.check_survivors(tmp_path, lines, key)


@pytest.mark.parametrize("writes", [2, 90, 400])
async def test_kill_9_while_a_batch_is_applied_applies_every_write_exactly_once(
    tmp_path: Path, writes: int
) -> None:
    """ME-8: killed right after the store committed its n-th write (in the first batch, or in
    a later one, whose touches hit records already in the store), the replay neither loses an
    acknowledged write nor applies a touch or fact change twice."""
    args = ("--flush-records", "50", "--die-after-store-writes", str(writes))
    lines, code = await cw.run(tmp_path, *args)
    assert code == -signal.SIGKILL
    assert await cw.check_survivors(tmp_path, lines) > 0
