"""Memory: what agents write while they work and get back at the right moment (SPEC ME).

Seam: `MemoryStore` (store.py), with SQLite and PostgreSQL backends and a write-ahead log in front
(wal.py). `Memory` (service.py) is the Python API every surface calls; `build_context` (context.py)
is the session-start retrieval; `summarize_session` (summaries.py) the cascading summaries.
To add a backend, implement `MemoryStore` and add its URL scheme to `backends.store_from_url`.
"""

from nerve.memory.build import build_memory
from nerve.memory.context import Context, build_context
from nerve.memory.model import Record
from nerve.memory.routes import memory_router
from nerve.memory.service import Memory, Recalled, Stored
from nerve.memory.store import MemoryStore, Query

__all__ = [
    "Context",
    "Memory",
    "MemoryStore",
    "Query",
    "Recalled",
    "Record",
    "Stored",
    "build_context",
    "build_memory",
    "memory_router",
]
