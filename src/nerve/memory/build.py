"""Wires `Memory` from the config: the store from `storage.url`, group commit in front of it.

By default a write is acknowledged once committed in the store; concurrent writes share one
transaction (groupcommit.py), so every process sees a write the moment it is acknowledged.
`memory.wal.enabled` (SQLite only) puts the file WAL in front instead (wal/): a write is
acknowledged once fsync'd there and applied to the store in batches, so other processes see it
only once applied. Only one process may own a WAL file; a second one on the same data finds it
locked and uses group commit.
"""

from __future__ import annotations

import base64
import binascii
import fcntl
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import IO

from nerve.config import Config
from nerve.errors import ConfigError
from nerve.memory.backends import store_from_url
from nerve.memory.dense import DenseIndex, minilm
from nerve.memory.groupcommit import GroupCommit
from nerve.memory.index import SearchIndex
from nerve.memory.service import Memory
from nerve.memory.store import MemoryStore
from nerve.memory.wal import WalStore, WriteAheadLog

__all__ = ["build_memory", "wal_path"]

log = logging.getLogger("nerve.memory")
KEY_ENV = "NERVE_WAL_KEY"


def wal_path(config: Config) -> Path:
    if config.memory.wal.path:
        return Path(config.memory.wal.path)
    url = config.storage.url
    if url.startswith("sqlite:///"):
        return Path(url.removeprefix("sqlite:///")).with_suffix(".wal")
    return Path(".nerve") / "memory.wal"


def wal_key(environ: Mapping[str, str]) -> bytes:
    raw = environ.get(KEY_ENV, "")
    try:
        key = base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError):
        key = b""
    if len(key) != 32:
        raise ConfigError(
            f"memory.wal.encrypt is on, so ${KEY_ENV} must hold 32 random bytes in base64, e.g. "
            "from `python -c 'import os,base64;print(base64.b64encode(os.urandom(32)).decode())'`",
            path="memory.wal.encrypt",
        )
    return key


def _lock(path: Path) -> IO[bytes] | None:
    """An exclusive lock on `path`.lock held for the process's life, or None if taken."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(f"{path}.lock", "ab")  # noqa: SIM115 - held open on purpose: it is the lock
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return None
    return handle


class _Locked(WalStore):
    """A WalStore that releases its file lock when closed."""

    def __init__(self, store: MemoryStore, wal: WriteAheadLog, lock: IO[bytes]) -> None:
        super().__init__(store, wal)
        self._lock_handle = lock

    async def close(self) -> None:
        try:
            await super().close()
        finally:
            self._lock_handle.close()


def build_memory(config: Config, environ: Mapping[str, str] | None = None) -> Memory:
    env = os.environ if environ is None else environ
    index = SearchIndex(dense=_dense()) if config.memory.embeddings else None  # may refuse
    backend = store_from_url(config.storage.url)
    store: MemoryStore = GroupCommit(backend)
    if config.memory.wal.enabled:
        key = wal_key(env) if config.memory.wal.encrypt else None
        path = wal_path(config)
        lock = _lock(path)
        if lock is None:
            log.warning("%s is in use by another nerve process: committing straight to the "
                        "store", path)  # fmt: skip
        else:
            store = _Locked(backend, WriteAheadLog(path, key=key), lock)
    return Memory(
        store,
        importance_threshold=config.memory.importance_threshold,
        short_term_cap=config.memory.short_term_cap,
        max_data_bytes=config.memory.max_data_bytes,
        index=index,
        cache_records=config.memory.search_cache_records,
    )


def _dense() -> DenseIndex:
    """The optional embedding channel; costs ~11 ms of CPU per stored record."""
    try:
        return DenseIndex(minilm())
    except ImportError as e:
        raise ConfigError(str(e), path="memory.embeddings") from None
