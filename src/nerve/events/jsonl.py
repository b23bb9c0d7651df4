"""`JsonlFile`: the event log as JSON lines, shared by every process on the machine (AD-4).

Writers take an exclusive `flock` on `<file>.lock`, number their batch from the last `seq` in
the file (read from its tail, or remembered when nobody wrote since), append it in one `write`
and release: `seq` is unique and increases down the file whatever process wrote a line, so a
reader's `after=<seq>` never skips another process's late batch. A file over `max_bytes` is
renamed to `<file>.1` under the same lock (one previous generation is kept); numbering goes on.

Readers take no lock: they read the file backwards from its end in 64 KiB blocks (then `.1`),
skip a last line still being written and any line that does not parse, and stop at `after`,
at `limit` matches, or after `scan_bytes` (~25K events of 300 bytes), so a poll costs what it
returns. Lines start `{"seq":N,` (the writer puts it first), so a line is only parsed when its
seq and text match.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import IO, Any

import orjson

__all__ = ["JsonlFile"]

_BLOCK = 64 * 1024
_PREFIX = b'{"seq":'


def _backward(f: IO[bytes], end: int) -> Iterator[bytes]:
    """The complete lines of `f` before offset `end`, last first. The piece after the last
    newline is a line being written (or cut by a crash): skipped."""
    pos, rest, complete = end, b"", False
    while pos > 0:
        start = max(0, pos - _BLOCK)
        f.seek(start)
        block = f.read(pos - start) + rest
        pos = start
        if not complete:
            cut = block.rfind(b"\n")
            if cut < 0:  # still inside the unfinished last piece
                rest = block
                continue
            block, complete = block[:cut], True
        lines = block.split(b"\n")
        rest = lines[0]  # it may begin in the block before
        yield from (line for line in reversed(lines[1:]) if line)
    if complete and rest:
        yield rest


def _seq(line: bytes) -> int | None:
    if line.startswith(_PREFIX):
        end = line.find(b",", len(_PREFIX))
        if end > 0 and line[len(_PREFIX) : end].isdigit():
            return int(line[len(_PREFIX) : end])
    return None


def _lower(line: bytes) -> str:
    return line.decode("utf-8", "replace").lower()


def _parse(line: bytes) -> dict[str, Any] | None:
    try:
        event = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return event if isinstance(event, dict) else None


class JsonlFile:
    def __init__(
        self, path: Path, *, max_bytes: int = 64 * 1024 * 1024, scan_bytes: int = 8 * 1024 * 1024
    ) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.scan_bytes = scan_bytes
        self._mark: tuple[int, int] | None = None  # (inode, size) the file had after our write
        self._last = 0  # the seq we wrote last

    @property
    def previous(self) -> Path:
        """The generation before the current one."""
        return self.path.with_name(self.path.name + ".1")

    def __str__(self) -> str:
        return str(self.path)

    async def open(self) -> None:
        return None

    async def close(self) -> None:
        return None

    async def write(self, events: list[dict[str, Any]]) -> None:
        await asyncio.to_thread(self.append, events)  # flock may wait for another process

    async def read(
        self, *, kinds: Collection[str] | None, q: str | None, after: int, limit: int
    ) -> list[dict[str, Any]]:
        return await asyncio.to_thread(self.scan, kinds, q, after, limit)

    def append(self, events: list[dict[str, Any]]) -> None:
        """Number `events` after the file's last line and append them, under the lock."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock = os.open(self.path.with_name(self.path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                info = os.fstat(fd)
                if (info.st_ino, info.st_size) == self._mark:
                    last, clean = self._last, True  # nobody wrote since our last batch
                else:
                    last, clean = self._last_seq(fd, info.st_size)
                for event in events:
                    last += 1
                    event["seq"] = last
                data = b"".join(orjson.dumps(e, default=str) + b"\n" for e in events)
                data = data if clean else b"\n" + data  # end a line cut by a crash first
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                size = info.st_size + len(data)
                self._mark, self._last = (info.st_ino, size), last
            finally:
                os.close(fd)
            if size > self.max_bytes:  # keep one previous generation
                os.replace(self.path, self.previous)
                self._mark = None
        finally:
            os.close(lock)  # releases the flock

    def _last_seq(self, fd: int, size: int) -> tuple[int, bool]:
        """The last seq written (this file's, else the previous generation's) and whether the
        file ends with a newline."""
        clean = True
        if size:
            with os.fdopen(os.dup(fd), "rb") as f:
                f.seek(size - 1)
                clean = f.read(1) == b"\n"
                seq = next(filter(None, map(_seq, _backward(f, size))), None)
            if seq is not None:
                return seq, clean
        try:
            with self.previous.open("rb") as f:
                end = os.fstat(f.fileno()).st_size
                return next(filter(None, map(_seq, _backward(f, end))), 0), clean
        except FileNotFoundError:
            return 0, clean

    def scan(
        self, kinds: Collection[str] | None, q: str | None, after: int, limit: int
    ) -> list[dict[str, Any]]:
        """The newest `limit` matching events with seq > `after`, oldest first."""
        needle = (q or "").lower()
        out: list[dict[str, Any]] = []
        budget = self.scan_bytes
        seen: set[int] = set()
        for path in (self.path, self.previous):
            try:
                f = path.open("rb")
            except FileNotFoundError:
                continue
            with f:
                info = os.fstat(f.fileno())
                if info.st_ino in seen:  # rotated while we read: the same generation again
                    continue
                seen.add(info.st_ino)
                for line in _backward(f, info.st_size):
                    budget -= len(line) + 1
                    seq = _seq(line)
                    if seq is not None and seq <= after:
                        return out[::-1]
                    if seq is not None and (not needle or needle in _lower(line)):
                        event = _parse(line)
                        if event is not None and (not kinds or event.get("kind") in kinds):
                            out.append(event)
                            if len(out) >= limit:
                                return out[::-1]
                    if budget <= 0:
                        return out[::-1]
        return out[::-1]
