"""The write-ahead log (ME-8): memory writes become durable here before they reach the store.

`WriteAheadLog` owns the segment files (their bytes: file.py); `WalStore` (store.py) is
the `MemoryStore` that puts it in front of any other. The active segment is `path`. `seal`
renames it to `path.<seq>` and starts the next; a sealed segment waits there until the store has
applied it, then `drop` deletes it: that is the checkpoint. `open` returns every segment found,
sealed, for replay.

Group commit: `append` queues a payload and returns a future at once; one task writes
everything queued so far with one write and one fdatasync in a worker thread, then resolves the
futures. Writers that arrive during an fsync share the next one. A failed write leaves the file
in an unknown state, so the log then refuses everything until it is opened again.
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from nerve.memory.wal.file import (
    MAX_FRAME,
    WalError,
    create_file,
    encode_frames,
    fdatasync,
    fsync_dir,
    log,
    make_header,
    read_frames,
    read_header,
    write_all,
)

__all__ = ["Segment", "WalError", "WriteAheadLog"]


@dataclass(frozen=True, slots=True)
class Segment:
    """A segment found at open, now sealed: its payloads in order, any torn tail removed."""

    seq: int
    payloads: list[bytes]


class WriteAheadLog:
    """Segments at `path` (and `path.<seq>`); frames encrypted with AES-GCM when `key` (32
    bytes, the caller reads it from $NERVE_WAL_KEY) is given."""

    def __init__(self, path: str | Path, *, key: bytes | None = None) -> None:
        if key is not None and len(key) != 32:
            raise ValueError("a WAL key is 32 bytes")
        self.path = Path(path)
        self.syncs = 0  # group commits (one write + one fdatasync each)
        self.frames = 0  # frames they wrote
        self._key = key
        self._ciphers: dict[int, AESGCM | None] = {}
        self._fd = -1
        self._seq = self._offset = self._header_len = 0
        self._queue: list[tuple[bytes | None, asyncio.Future[Any]]] = []
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        self._failed: BaseException | None = None

    async def open(self) -> list[Segment]:
        """Every segment on disk, oldest first, sealed; a fresh active segment is started."""
        if self._task is not None:
            raise RuntimeError(f"{self.path} is already open")
        segments = await asyncio.to_thread(self._open_sync)
        self._closing, self._failed = False, None
        self._task = asyncio.create_task(self._commit_loop(), name=f"wal {self.path.name}")
        return segments

    def append(self, payload: bytes) -> asyncio.Future[None]:
        """Queue `payload` now; the future resolves once it is written and fsync'd."""
        self._check_usable()
        if not 0 < len(payload) <= MAX_FRAME:
            raise ValueError(f"a WAL payload is 1 byte to {MAX_FRAME} bytes, not {len(payload)}")
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.append((payload, future))
        self._wake.set()
        return future

    async def seal(self) -> int:
        """Seal the active segment once everything appended before this call is durable and
        start the next one; returns the sealed segment's seq."""
        self._check_usable()
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._queue.append((None, future))  # queued now, before any later append
        self._wake.set()
        return await future

    async def append_sealed(self, seq: int, payload: bytes) -> None:
        """Append one frame to sealed segment `seq`, durably (WalStore's "applying" marker)."""
        await asyncio.to_thread(self._append_sealed_sync, seq, payload)

    async def drop(self, seq: int) -> None:
        """The store holds everything in segment `seq`: delete it (the checkpoint)."""
        await asyncio.to_thread(self._drop_sync, seq)

    async def close(self) -> None:
        """Finish queued writes; an active segment without frames is removed."""
        if self._task is None:
            return
        self._closing = True
        self._wake.set()
        try:
            await self._task
        finally:
            self._task = None
            await asyncio.to_thread(self._close_sync)

    def _check_usable(self) -> None:
        if self._failed is not None:
            raise WalError(f"an earlier write to {self.path} failed: {self._failed}")
        if self._task is None or self._closing:
            raise WalError(f"the WAL at {self.path} is not open")

    async def _commit_loop(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._queue:
                entries, self._queue = self._queue, []
                run: list[tuple[bytes, asyncio.Future[Any]]] = []
                for payload, future in entries:
                    if payload is not None:
                        run.append((payload, future))
                        continue
                    await self._write(run)
                    run = []
                    await self._settle([future], self._seal_sync)
                await self._write(run)
            if self._closing:
                return

    async def _write(self, run: list[tuple[bytes, asyncio.Future[Any]]]) -> None:
        if run:
            write = functools.partial(self._write_sync, [payload for payload, _ in run])
            await self._settle([future for _, future in run], write)

    async def _settle(self, futures: list[asyncio.Future[Any]], work: Callable[[], Any]) -> None:
        """Run `work` in a thread unless the log has failed; resolve `futures` with its result."""
        try:
            if self._failed is not None:
                raise WalError(f"an earlier write to {self.path} failed: {self._failed}")
            result = await asyncio.to_thread(work)
        except Exception as exc:
            if self._failed is None:
                log.error("WAL %s: write failed, refusing further writes: %s", self.path, exc)
                self._failed = exc
            for future in futures:
                if not future.done():
                    future.set_exception(exc)
            return
        for future in futures:
            if not future.done():  # a writer that was cancelled no longer waits
                future.set_result(result)

    # -- in a worker thread ------------------------------------------------------------------

    def _sealed_path(self, seq: int) -> Path:
        return self.path.with_name(f"{self.path.name}.{seq:012d}")

    def _open_sync(self) -> list[Segment]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.with_name(self.path.name + ".tmp").unlink(missing_ok=True)
        prefix = self.path.name + "."
        found: dict[int, tuple[Path, AESGCM | None, int]] = {}
        for file in sorted(self.path.parent.iterdir()):
            tail = file.name.removeprefix(prefix)
            if file.name != self.path.name and (tail == file.name or not tail.isdigit()):
                continue
            seq, cipher, header_len = read_header(file, self._key)
            if seq in found:
                raise WalError(f"{file} and {found[seq][0]} are both WAL segment {seq}")
            found[seq] = (file, cipher, header_len)
        segments = []
        for seq in sorted(found):
            file, cipher, header_len = found[seq]
            payloads = read_frames(file, cipher, header_len)
            if file == self.path:
                os.rename(file, self._sealed_path(seq))
                fsync_dir(self.path.parent)
            self._ciphers[seq] = cipher
            segments.append(Segment(seq, payloads))
        self._start_segment(max(found, default=0) + 1)
        return segments

    def _start_segment(self, seq: int) -> None:
        head, cipher = make_header(seq, self._key)
        create_file(self.path, head)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        self._seq, self._offset, self._header_len = seq, len(head), len(head)
        self._ciphers[seq] = cipher

    def _write_sync(self, payloads: list[bytes]) -> None:
        data = encode_frames(payloads, self._ciphers[self._seq], self._offset)
        write_all(self._fd, data)
        fdatasync(self._fd)
        self._offset += len(data)
        self.syncs += 1
        self.frames += len(payloads)

    def _seal_sync(self) -> int:
        sealed = self._seq
        os.close(self._fd)
        self._fd = -1
        os.rename(self.path, self._sealed_path(sealed))
        fsync_dir(self.path.parent)  # durable before a new file takes the name `path`
        self._start_segment(sealed + 1)
        return sealed

    def _append_sealed_sync(self, seq: int, payload: bytes) -> None:
        fd = os.open(self._sealed_path(seq), os.O_WRONLY | os.O_APPEND)
        size = os.fstat(fd).st_size
        try:
            write_all(fd, encode_frames([payload], self._ciphers[seq], size))
            fdatasync(fd)
        except OSError:
            os.ftruncate(fd, size)  # a retry must not append after a torn frame
            raise
        finally:
            os.close(fd)

    def _drop_sync(self, seq: int) -> None:
        self._sealed_path(seq).unlink(missing_ok=True)
        fsync_dir(self.path.parent)
        self._ciphers.pop(seq, None)

    def _close_sync(self) -> None:
        if self._fd < 0:
            return
        os.close(self._fd)
        self._fd = -1
        if self._offset == self._header_len and self._failed is None:
            self.path.unlink(missing_ok=True)
            fsync_dir(self.path.parent)
