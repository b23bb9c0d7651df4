"""Which `MemoryStore` a URL names: the one place memory's backend is chosen (ME-3).

The URL forms are nerve.store.url's. To add a backend: implement `MemoryStore`, run tests/memory
against it, add its scheme here and there.
"""

from __future__ import annotations

from nerve.memory.sqlite import SQLiteStore
from nerve.memory.store import MemoryStore
from nerve.store.url import SQLiteURL, parse_store_url

__all__ = ["store_from_url"]


def store_from_url(url: str) -> MemoryStore:
    """The store for `url`, not yet opened. Raises ValueError (naming the scheme, never the
    whole URL, which may hold a password) for anything else."""
    where = parse_store_url(url, what="memory store")
    if isinstance(where, SQLiteURL):
        return SQLiteStore(where.path)
    # Imported here, not above: it imports asyncpg, the optional extra nerve[postgres].
    from nerve.memory.postgres import PostgresStore

    return PostgresStore(where.dsn, schema=where.schema)
