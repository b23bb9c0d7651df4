"""Group commit: concurrent memory writes share one transaction (SPEC ME-8, DESIGN "State and
scale").

`GroupCommit(store)` is a `MemoryStore` whose writes are acknowledged once committed in `store`,
like the store's own, but cheaper under load: writes that arrive while a transaction commits
wait for the next one, which takes them all (up to `max_ops`), so N concurrent writers cost one
commit (one fsync, one round trip) instead of N. A lone writer waits for nobody. If a shared
transaction fails, its writes are run again one transaction each, so a bad write fails alone
and the others are still committed. Reads go straight to the store: an acknowledged write is
already in it, for this process and every other.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Sequence

from nerve.memory.codec import check_change, check_finite, check_record
from nerve.memory.model import Entry, FactChange, Record
from nerve.memory.ops import Op, Writes
from nerve.memory.store import Deleted, MemoryStore, Query

__all__ = ["GroupCommit"]

log = logging.getLogger("nerve.memory")

_Waiting = tuple[list[Op], asyncio.Future[list[int]]]


class GroupCommit(Writes):
    def __init__(self, store: MemoryStore, *, max_ops: int = 2000) -> None:
        self.store = store
        self.max_ops = max_ops
        self.commits = 0  # transactions run (for tests and benches)
        self._queue: list[_Waiting] = []
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closing = False

    async def open(self) -> None:
        await self.store.open()
        if self._task is None:
            self._closing = False
            self._task = asyncio.create_task(self._commit_loop(), name="memory group commit")

    async def close(self) -> None:
        """Commit what is queued, then close the store."""
        task = self._task
        if task is not None:
            self._closing = True
            self._wake.set()
            try:
                await task
            finally:
                self._task = None
        await self.store.close()

    async def write(self, ops: Sequence[Op]) -> list[int]:
        if not ops:
            return []
        if self._task is None or self._closing:
            raise RuntimeError("the memory store is not open")
        for op in ops:  # refuse now what the store would refuse in the shared transaction
            _check(op)
        future: asyncio.Future[list[int]] = asyncio.get_running_loop().create_future()
        self._queue.append((list(ops), future))
        self._wake.set()
        # Shielded: a caller that gives up does not take the shared transaction down with it.
        return await asyncio.shield(future)

    async def _commit_loop(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._queue:
                await self._commit(self._take())
            if self._closing:
                return

    def _take(self) -> list[_Waiting]:
        taken, size = 0, 0
        for ops, _ in self._queue:
            if taken and size + len(ops) > self.max_ops:
                break
            taken, size = taken + 1, size + len(ops)
        batch, self._queue = self._queue[:taken], self._queue[taken:]
        return batch

    async def _commit(self, batch: list[_Waiting]) -> None:
        try:
            counts = await self.store.write([op for ops, _ in batch for op in ops])
            self.commits += 1
        except Exception as exc:
            if len(batch) == 1:
                _settle(batch[0][1], exc)
                return
            log.debug("a shared memory transaction failed (%s); writing one by one", exc)
            for entry in batch:
                await self._commit([entry])
            return
        at = 0
        for ops, future in batch:
            _settle(future, counts[at : at + len(ops)])
            at += len(ops)

    # -- reads: the store has every acknowledged write already ----------------------------------

    async def get(self, ids: Sequence[str]) -> list[Record]:
        return await self.store.get(ids)

    async def query(self, query: Query) -> list[Record]:
        return await self.store.query(query)

    async def fact_history(self, user_id: str, entity: str, attribute: str) -> list[FactChange]:
        return await self.store.fact_history(user_id, entity, attribute)

    def scan(self, user_id: str | None = None) -> AsyncIterator[Record]:
        return self.store.scan(user_id)

    async def version(self, user_id: str) -> int:
        return await self.store.version(user_id)

    def changed(self, user_id: str, since: int) -> AsyncIterator[Entry]:
        return self.store.changed(user_id, since)

    async def deleted(self, user_id: str, since: int) -> Deleted:
        return await self.store.deleted(user_id, since)


def _check(op: Op) -> None:
    """The cheap checks. A put's records are checked as the store encodes them: a bad one fails
    its shared transaction before any SQL runs, and then alone (see `_commit`)."""
    a = op.args
    if op.kind == "put_fact":
        check_record(a[0])
        check_change(a[1])
    elif op.kind == "replace_with_summary":
        check_record(a[1])
    elif op.kind == "touch":
        check_finite(a[1])


def _settle(future: asyncio.Future[list[int]], outcome: list[int] | BaseException) -> None:
    if future.done():
        return
    if isinstance(outcome, BaseException):
        future.set_exception(outcome)
    else:
        future.set_result(outcome)
