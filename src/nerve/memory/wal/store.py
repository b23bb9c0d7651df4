"""`WalStore`: a `MemoryStore` that makes each write durable in a WAL first (ME-8).

A write returns once its frame is fsync'd (group commit: log.py). Acknowledged writes reach the
inner store in batches: when `flush_records` are waiting, every `flush_interval` seconds, and
before every read, so a read sees every acknowledged write. `delete` and `delete_user` return
counts, so they also wait for the batch holding them to be applied.

A batch is one sealed segment. Applying it: (1) when it holds an additive op (touch, put_fact),
append a marker with the touches' outcomes to the segment (ops.py says why); (2) run the ops
on the store, in order; (3) delete the segment. A segment with a marker may have been applied in
part, so it is run again idempotently; one without was never started, so it runs as new. `open`
replays what it finds the same way before anything else happens.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from nerve.memory.codec import check_change, check_finite, check_record
from nerve.memory.model import Entry, FactChange, Record
from nerve.memory.ops import Op
from nerve.memory.store import Deleted, MemoryStore, Query
from nerve.memory.wal import ops as walops

if TYPE_CHECKING:
    from nerve.memory.wal.log import WriteAheadLog

__all__ = ["WalStore"]

log = logging.getLogger("nerve.memory.wal")


@dataclass(slots=True, eq=False)
class _Batch:
    seq: int
    ops: list[Op]
    marked: bool = False  # started: a marker is durable, or none was needed
    touched: walops.Touched = field(default_factory=dict)


def _retrieved(task: asyncio.Task[None]) -> None:
    """A flush's failure reaches whoever waits for it; with nobody waiting, it is not news."""
    if not task.cancelled():
        task.exception()


class WalStore:
    def __init__(
        self,
        store: MemoryStore,
        wal: WriteAheadLog,
        *,
        flush_records: int = 1000,
        flush_interval: float = 0.2,
    ) -> None:
        self.store = store
        self.wal = wal
        self.flush_records = flush_records
        self.flush_interval = flush_interval
        self.replayed = 0  # ops found in the WAL by `open`
        self._unsealed: list[Op] = []  # logged to the active segment
        self._sealed: deque[_Batch] = deque()  # sealed, not yet applied, oldest first
        self._logged = self._applied = 0
        self._flushing: asyncio.Task[None] | None = None  # one at a time: batches apply in order
        self._kick = asyncio.Event()
        self._flusher: asyncio.Task[None] | None = None

    async def open(self) -> None:
        """Open the store, replay the WAL into it, then take writes. A no-op when open."""
        if self._flusher is not None:
            return
        await self.store.open()
        segments = await self.wal.open()
        try:
            for segment in segments:
                batch = _Batch(segment.seq, [])
                for payload in segment.payloads:
                    item = walops.decode(payload)
                    if isinstance(item, Op):
                        batch.ops.append(item)
                    else:
                        batch.marked, batch.touched = True, item
                self._sealed.append(batch)
                self.replayed += len(batch.ops)
            await self._apply_sealed()
        except BaseException:
            self._sealed.clear()  # read again from disk by the next `open`
            self.replayed = 0
            await self.wal.close()
            raise
        self._logged = self._applied = 0
        if self.replayed:
            log.info("WAL %s: replayed %d operations", self.wal.path, self.replayed)
        self._flusher = asyncio.create_task(self._flush_loop(), name="wal flusher")

    async def close(self) -> None:
        """Apply everything acknowledged, checkpoint, close the WAL and the store."""
        if self._flusher is None:
            return
        self._flusher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._flusher
        self._flusher = None
        try:
            await self.flush()
        finally:
            try:
                await self.wal.close()
            finally:
                await self.store.close()  # even when the close above was cancelled

    async def flush(self) -> None:
        """Apply every write logged so far to the store and checkpoint the WAL. The work runs
        as a task of its own, shared by concurrent callers: a caller that is cancelled never
        leaves a segment sealed but not recorded as a batch."""
        target = self._logged
        while self._applied < target:
            if self._flushing is None:
                self._flushing = asyncio.create_task(self._flush_once(), name="wal flush")
                self._flushing.add_done_callback(_retrieved)
            await asyncio.shield(self._flushing)

    async def _flush_once(self) -> None:
        try:
            if self._unsealed:
                n = len(self._unsealed)
                seq = await self.wal.seal()  # queued before any later append
                ops, self._unsealed = self._unsealed[:n], self._unsealed[n:]
                self._sealed.append(_Batch(seq, ops))
            await self._apply_sealed()
        finally:
            self._flushing = None

    # -- writes --------------------------------------------------------------------------------

    async def put(self, records: Sequence[Record]) -> None:
        for record in records:
            check_record(record)
        if records:
            await self._log(Op("put", (list(records),)))

    async def delete(self, ids: Sequence[str]) -> int:
        return await self._log(Op("delete", (list(ids),)), applied=True) if ids else 0

    async def delete_user(self, user_id: str) -> int:
        return await self._log(Op("delete_user", (user_id,)), applied=True)

    async def touch(self, ids: Sequence[str], at: float) -> None:
        check_finite(at)
        if ids:
            await self._log(Op("touch", (list(ids), float(at))))

    async def put_fact(self, record: Record, change: FactChange) -> None:
        check_record(record)
        check_change(change)
        await self._log(Op("put_fact", (record, change)))

    async def replace_with_summary(self, delete_ids: Sequence[str], summary: Record) -> None:
        check_record(summary)
        await self._log(Op("replace_with_summary", (list(delete_ids), summary)))

    async def write(self, ops: Sequence[Op]) -> list[int]:
        """Each op logged in turn (a WAL replays them in order; they are not one transaction)."""
        counts = []
        for op in ops:
            a = op.args
            if op.kind == "put":
                await self.put(a[0])
            elif op.kind == "delete":
                counts.append(await self.delete(a[0]))
                continue
            elif op.kind == "delete_user":
                counts.append(await self.delete_user(a[0]))
                continue
            elif op.kind == "touch":
                await self.touch(a[0], a[1])
            elif op.kind == "put_fact":
                await self.put_fact(a[0], a[1])
            else:
                await self.replace_with_summary(a[0], a[1])
            counts.append(0)
        return counts

    async def _log(self, op: Op, *, applied: bool = False) -> int:
        payload = walops.encode(op)
        if len(self._unsealed) >= 4 * self.flush_records:  # the store lags behind: wait for it
            await self.flush()
        durable = self.wal.append(payload)
        self._unsealed.append(op)
        self._logged += 1
        if len(self._unsealed) >= self.flush_records:
            self._kick.set()
        await durable
        if applied:
            await self.flush()
        return op.count

    # -- reads: everything acknowledged is applied first -----------------------------------------

    async def _settle_for_read(self) -> None:
        """Apply what a read must see. Pending touches alone are not waited for: they only move
        access statistics, and waiting would cost every recall a store write."""
        if self._sealed or any(op.kind != "touch" for op in self._unsealed):
            await self.flush()

    async def get(self, ids: Sequence[str]) -> list[Record]:
        await self._settle_for_read()
        return await self.store.get(ids)

    async def query(self, query: Query) -> list[Record]:
        await self._settle_for_read()
        return await self.store.query(query)

    async def fact_history(self, user_id: str, entity: str, attribute: str) -> list[FactChange]:
        await self.flush()
        return await self.store.fact_history(user_id, entity, attribute)

    async def scan(self, user_id: str | None = None) -> AsyncIterator[Record]:
        await self.flush()
        async for record in self.store.scan(user_id):
            yield record

    async def version(self, user_id: str) -> int:
        await self._settle_for_read()
        return await self.store.version(user_id)

    async def deleted(self, user_id: str, since: int) -> Deleted:
        await self._settle_for_read()
        return await self.store.deleted(user_id, since)

    async def changed(self, user_id: str, since: int) -> AsyncIterator[Entry]:
        await self._settle_for_read()
        async for entry in self.store.changed(user_id, since):
            yield entry

    # -- applying ------------------------------------------------------------------------------

    async def _flush_loop(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.flush_interval):
                    await self._kick.wait()
            self._kick.clear()
            try:
                await self.flush()
            except Exception:
                log.exception("WAL %s: applying to the store failed; will retry", self.wal.path)

    async def _apply_sealed(self) -> None:
        while self._sealed:
            batch = self._sealed[0]
            if batch.marked:
                await walops.apply(self.store, batch.ops, again=True, touched=batch.touched)
            else:
                if any(op.kind in walops.ADDITIVE for op in batch.ops):
                    batch.touched = await walops.outcomes(self.store, batch.ops)
                    await self.wal.append_sealed(batch.seq, walops.encode_marker(batch.touched))
                batch.marked = True
                await walops.apply(self.store, batch.ops, again=False, touched={})
            await self.wal.drop(batch.seq)
            self._sealed.popleft()
            self._applied += len(batch.ops)
