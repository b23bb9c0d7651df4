"""`nerve memory export|import` against a store: every record and fact change as JSON lines
(jsonl.py), in constant memory, both ways. This is also how memory moves between backends.

Export streams keyset pages of `scan`, then of `scan_fact_history`. Import validates every line
(a bad one is reported as `line N: why`, the others still import) and writes `batch` records per
transaction. It is idempotent by id: a record the store already holds unchanged is not written
again (no version is raised, no cache invalidated); a newer copy the store holds (a later
`updated_at`, or the same and a later `accessed_at`) is kept unless `overwrite`; a fact change
already in the history is not appended again. Within the file, the same id twice: the newer
copy wins, then the later line. Other processes may write meanwhile; the one race: a record
another process rewrites between the check and the write of a batch (milliseconds apart) may
be replaced by the file's copy.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from nerve.errors import NerveError
from nerve.memory.backends import store_from_url
from nerve.memory.jsonl import BadLine, decode_line, encode_change, encode_record
from nerve.memory.model import FactChange, Record
from nerve.memory.store import FactHistoryStore, MemoryStore

__all__ = [
    "Exported",
    "ImportStopped",
    "Imported",
    "TransferStore",
    "check",
    "export",
    "import_lines",
    "open_store",
]

BATCH = 10_000  # records per transaction: the commit's fsync is noise, the memory bounded
MAX_ERRORS = 20  # bad lines whose reason is kept; all of them are counted


class TransferStore(MemoryStore, FactHistoryStore, Protocol):
    """A backend itself (not group commit or the WAL in front of it): what export and import use."""


def open_store(url: str) -> TransferStore:
    """The backend for `url`, not yet opened."""
    store = store_from_url(url)
    if not isinstance(store, FactHistoryStore):  # pragma: no cover - both backends are
        raise TypeError(f"{type(store).__name__} cannot export or import fact history")
    return store


@dataclass(slots=True)
class Exported:
    records: int = 0
    fact_changes: int = 0
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        lines = self.records + self.fact_changes
        return {"exported": lines, "records": self.records, "fact_changes": self.fact_changes,
                "lines": lines, "seconds": round(self.seconds, 3)}  # fmt: skip


@dataclass(slots=True)
class Imported:
    lines: int = 0
    records: int = 0  # written
    fact_changes: int = 0  # appended
    unchanged: int = 0  # records and fact changes the store held already
    kept_newer: int = 0  # records the store holds newer (updated, then recalled, later)
    duplicates: int = 0  # record lines that lost to another line of the file with their id
    bad: int = 0
    errors: list[str] = field(default_factory=list)  # the first MAX_ERRORS, "line N: why"
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"imported": self.records + self.fact_changes, "records": self.records,
                "fact_changes": self.fact_changes, "unchanged": self.unchanged,
                "kept_newer": self.kept_newer, "duplicates": self.duplicates,
                "skipped_bad": self.bad, "lines": self.lines,
                "seconds": round(self.seconds, 3), "errors": self.errors}  # fmt: skip

    def bad_line(self, number: int, why: str) -> None:
        self.bad += 1
        if len(self.errors) < MAX_ERRORS:
            self.errors.append(f"line {number}: {why}")


class ImportStopped(NerveError):
    """The store failed mid-import; the batches before were committed (a rerun is safe)."""


Progress = Callable[[int], None]  # called with the lines done so far, every 1000 lines


async def export(
    store: TransferStore,
    write: Callable[[bytes], Any],
    *,
    user_id: str | None = None,
    progress: Progress | None = None,
) -> Exported:
    """Every record (of one user, or all), then every fact change, one line each to `write`
    (in chunks of a page)."""
    started, done = time.perf_counter(), Exported()
    page: list[bytes] = []

    def flush() -> None:
        write(b"".join(page))
        page.clear()
        if progress:
            progress(done.records + done.fact_changes)

    async for record in store.scan(user_id):
        page.append(encode_record(record))
        done.records += 1
        if len(page) >= 1000:
            flush()
    async for change in store.scan_fact_history(user_id):
        page.append(encode_change(change))
        done.fact_changes += 1
        if len(page) >= 1000:
            flush()
    flush()
    done.seconds = time.perf_counter() - started
    return done


def check(lines: Iterable[bytes]) -> Imported:
    """Validate every line, importing nothing (import --strict, before it writes)."""
    started, summary = time.perf_counter(), Imported()
    for number, raw in enumerate(lines, 1):
        summary.lines = number
        if raw.strip():
            try:
                decode_line(raw)
            except BadLine as e:
                summary.bad_line(number, str(e))
    summary.seconds = time.perf_counter() - started
    return summary


async def import_lines(
    store: TransferStore,
    lines: Iterable[bytes],
    *,
    batch: int = BATCH,
    overwrite: bool = False,
    progress: Progress | None = None,
) -> Imported:
    """Import the good lines, in transactions of `batch` records; blank lines are skipped."""
    started, summary = time.perf_counter(), Imported()
    records: dict[str, Record] = {}
    changes: list[FactChange] = []
    first = 1  # the first line of the batch being gathered
    for number, raw in enumerate(lines, 1):
        summary.lines = number
        if not raw.strip():
            continue
        try:
            item = decode_line(raw)
        except BadLine as e:
            summary.bad_line(number, str(e))
            continue
        if isinstance(item, FactChange):
            changes.append(item)
        else:
            held = records.get(item.id)
            if held is not None:
                summary.duplicates += 1
            if held is None or overwrite or _newness(item) >= _newness(held):
                records[item.id] = item
        if len(records) + len(changes) >= batch:
            await _write(store, records, changes, overwrite, summary, first)
            first = number + 1
        if progress and number % 1000 == 0:
            progress(number)
    await _write(store, records, changes, overwrite, summary, first)
    if progress:
        progress(summary.lines)
    summary.seconds = time.perf_counter() - started
    return summary


def _newness(record: Record) -> tuple[float, float]:
    """Which of two copies of a record is newer: the later update, then the later recall."""
    return record.updated_at, record.accessed_at


async def _write(
    store: TransferStore,
    records: dict[str, Record],
    changes: list[FactChange],
    overwrite: bool,
    summary: Imported,
    first: int,
) -> None:
    try:
        stored = {r.id: r for r in await store.get(list(records))} if records else {}
        fresh: list[Record] = []
        for record in records.values():
            held = stored.get(record.id)
            if held == record:
                summary.unchanged += 1
            elif held is not None and not overwrite and _newness(held) > _newness(record):
                summary.kept_newer += 1
            else:
                fresh.append(record)
        # By user and time, as the records' indexes are: 1.5x faster into SQLite than file order.
        fresh.sort(key=lambda r: (r.user_id, r.created_at))
        await store.put(fresh)
        appended = await store.add_fact_history(changes)
    except Exception as e:
        done = f"the lines before line {first} are imported; " if first > 1 else ""
        raise ImportStopped(
            f"the store failed on the batch from line {first}: {type(e).__name__}: {e}; "
            f"{done}running the import again is safe"
        ) from e
    summary.records += len(fresh)
    summary.fact_changes += appended
    summary.unchanged += len(changes) - appended
    records.clear()
    changes.clear()
