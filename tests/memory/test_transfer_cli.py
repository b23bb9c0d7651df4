"""`nerve memory export | nerve memory import` as real processes, through a real pipe, from SQLite
into each backend; progress on a real terminal (ME-3)."""

from __future__ import annotations

import asyncio
import json
import os
import pty
import subprocess
import sys
from asyncio.subprocess import PIPE, Process
from pathlib import Path

from nerve.config import load_config
from nerve.memory import transfer
from nerve.memory.build import build_memory
from nerve.memory.jsonl import encode_record
from nerve.memory.sqlite import SQLiteStore
from nerve.memory.wal import WalStore, WriteAheadLog
from tests.memory import crash_writer as cw
from tests.memory.factories import rec
from tests.memory.test_transfer import contents, fill

NERVE = [sys.executable, "-m", "nerve", "memory"]
ENV = {k: v for k, v in os.environ.items() if k != "NERVE_CONFIG"}


async def spawn(*args: str, stdin: int | None = None, stdout: int = PIPE) -> Process:
    return await asyncio.create_subprocess_exec(
        *NERVE, *args, stdin=stdin, stdout=stdout, stderr=PIPE, env=ENV
    )


async def nerve(*args: str) -> tuple[int, bytes, bytes]:
    """Run `nerve memory *args`; (exit code, stdout, stderr)."""
    proc = await spawn(*args)
    async with asyncio.timeout(60):
        out, err = await proc.communicate()
    assert proc.returncode is not None
    return proc.returncode, out, err


def config(tmp_path: Path, name: str, url: str) -> str:
    path = tmp_path / f"{name}.yaml"
    path.write_text(f'storage: {{url: "{url}"}}\n')
    return str(path)


async def test_export_piped_into_import_moves_sqlite_memory_into_either_backend(
    storage_url, tmp_path
):
    source = SQLiteStore(tmp_path / "old.db")
    await source.open()
    await fill(source)
    await source.close()
    old = config(tmp_path, "old", f"sqlite:///{tmp_path / 'old.db'}")
    new = config(tmp_path, "new", storage_url)
    read, write = os.pipe()  # a real pipe between the two processes, as a shell makes
    export = await spawn("export", "--config", old, stdout=write)
    importer = await spawn("import", "-", "--strict", "--json", "--config", new, stdin=read)
    os.close(read)
    os.close(write)
    async with asyncio.timeout(60):
        _, exported = await export.communicate()
        imported, import_errors = await importer.communicate()
    assert export.returncode == 0, exported
    assert b"exported 44 records and 8 fact changes" in exported
    assert importer.returncode == 0, import_errors
    summary = json.loads(imported)
    assert (summary["records"], summary["fact_changes"], summary["lines"]) == (44, 8, 52)
    await source.open()
    target = transfer.open_store(storage_url)
    await target.open()
    try:
        assert await contents(target) == await contents(source)
    finally:
        await source.close()
        await target.close()


def test_import_draws_progress_on_a_terminal_and_nothing_elsewhere(tmp_path):
    (tmp_path / "m.jsonl").write_bytes(b"".join(encode_record(rec(n=i)) for i in range(50)))
    url = f"sqlite:///{tmp_path / 'm.db'}"
    command = [*NERVE, "import", "m.jsonl", "--batch", "10", "--config", config(tmp_path, "m", url)]
    quiet = subprocess.run(command, capture_output=True, cwd=tmp_path, env=ENV, timeout=60)
    assert quiet.returncode == 0 and quiet.stderr == b""
    leader, follower = pty.openpty()
    try:
        shown = subprocess.run(command, stdout=subprocess.PIPE, stderr=follower, cwd=tmp_path,
                               env=ENV, timeout=60)  # fmt: skip
        os.close(follower)
        terminal = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # EIO: the terminal's other end is closed and drained
                break
            if not chunk:
                break
            terminal += chunk
    finally:
        os.close(leader)
    assert shown.returncode == 0
    assert b"\rnerve: importing " in terminal and b"% " in terminal and b" lines, " in terminal
    assert terminal.endswith(b"\r\x1b[K")  # cleared at the end, before the summary on stdout
    assert b"imported 0 records" in shown.stdout  # the first run imported them all


def wal_config(directory: Path) -> str:
    path = directory / "nerve.yaml"
    path.write_text(
        f'storage: {{url: "sqlite:///{directory / "memory.db"}"}}\n'
        f'memory: {{wal: {{enabled: true, path: "{directory / "memory.wal"}"}}}}\n'
    )
    return str(path)


async def test_export_holds_the_writes_a_killed_server_left_in_the_wal(tmp_path):
    """With the WAL on and no process owning it, what a dead server acknowledged but never
    applied is applied first: exported now, and never replayed over an import later."""
    first = SQLiteStore(tmp_path / "memory.db")
    await first.open()
    await first.close()
    lines, _ = await cw.run(tmp_path, "--flush-records", "100000", "--die-after-store-writes", "1")
    acked = {line.split()[1] for line in lines if line.startswith("P ")}
    gone = {line.split()[1] for line in lines if line[0] in "dD"}
    store = SQLiteStore(tmp_path / "memory.db")
    await store.open()
    applied = {r.id async for r in store.scan()}
    await store.close()
    assert acked - gone - applied, "the killed writer left nothing unapplied: no test"
    code, out, err = await nerve("export", "--config", wal_config(tmp_path))
    assert code == 0, err
    exported = {json.loads(line).get("id") for line in out.splitlines()}
    assert not acked - gone - exported
    left = WalStore(SQLiteStore(tmp_path / "memory.db"), WriteAheadLog(tmp_path / "memory.wal"))
    await left.open()  # what a server starting now would replay: nothing
    try:
        assert left.replayed == 0
    finally:
        await left.close()


async def test_an_import_beside_a_server_that_owns_the_wal_loses_none_of_its_writes(tmp_path):
    """The server holds the WAL; the import writes straight to the store, which serialises the
    two; the server's search sees the imported records, and every write of both is kept."""
    config = load_config(wal_config(tmp_path))
    memory = build_memory(config)
    await memory.open()
    try:
        before = await memory.store_memory("asha", tier="episodic", intent="note",
                                           data={"text": "before"}, importance=0.9)  # fmt: skip
        imported = [rec("asha", n, data={"text": f"imported dosa {n}"}) for n in range(30)]
        (tmp_path / "m.jsonl").write_bytes(b"".join(map(encode_record, imported)))
        code, out, err = await nerve(
            "import", str(tmp_path / "m.jsonl"), "--json", "--config", wal_config(tmp_path)
        )
        assert code == 0, err
        assert json.loads(out)["records"] == 30
        after = await memory.store_memory("asha", tier="episodic", intent="note",
                                          data={"text": "after"}, importance=0.9)  # fmt: skip
        found = await memory.recall("asha", query="dosa", limit=100, touch=False)
        assert len(found) == 30
    finally:
        await memory.close()
    store = SQLiteStore(tmp_path / "memory.db")
    await store.open()
    try:
        ids = {r.id async for r in store.scan()}
    finally:
        await store.close()
    assert ids == {before.id, after.id, *(r.id for r in imported)}
