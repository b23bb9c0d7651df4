"""The write-ahead log (SPEC ME-8): memory writes are durable here before they reach the store.

Face: `WalStore(store, WriteAheadLog(path, key=...))`, a `MemoryStore` in front of any other.
Inside: `log` (segments, group commit, seal and drop), `file` (the frame bytes, optional
AES-GCM), `ops` (an operation's payload, the "applying" marker, replay), `store` (WalStore).
"""

from nerve.memory.wal.log import WalError, WriteAheadLog
from nerve.memory.wal.store import WalStore

__all__ = ["WalError", "WalStore", "WriteAheadLog"]
