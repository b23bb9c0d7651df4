"""Which `MemoryStore` a URL names: the one place a backend is chosen (ME-3).

    sqlite:///relative/path.db      a file relative to the working directory
    sqlite:////abs/path.db          an absolute path
    sqlite:///:memory:              an in-process database (gone when closed)
    postgresql://user@host:5432/db  PostgreSQL (also postgres://); ?schema=NAME picks the schema

To add a backend: implement `MemoryStore`, run tests/memory against it, add its scheme here.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from nerve.memory.store import MemoryStore

__all__ = ["store_from_url"]


def store_from_url(url: str) -> MemoryStore:
    """The store for `url`, not yet opened. Raises ValueError (naming the scheme, never the
    whole URL, which may hold a password) for anything else."""
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme == "sqlite":
        from nerve.memory.sqlite import SQLiteStore

        if not url.startswith("sqlite:///") or len(url) == len("sqlite:///"):
            raise ValueError(
                "a SQLite memory URL is sqlite:///relative/path.db or sqlite:////abs/path.db"
            )
        path = url[len("sqlite:///") :]
        return SQLiteStore(path if path == ":memory:" else Path(path).expanduser())
    if scheme in ("postgresql", "postgres"):
        try:
            from nerve.memory.postgres import PostgresStore
        except ImportError as exc:  # asyncpg is the optional extra nerve[postgres]
            raise ValueError(
                f"a {scheme}:// memory store needs asyncpg: pip install 'nerve[postgres]'"
            ) from exc

        parts = urlsplit(url)
        query = parse_qsl(parts.query, keep_blank_values=True)
        # asyncpg would send an unknown parameter such as schema to the server as a setting.
        schema = next((v for k, v in query if k == "schema"), "public")
        rest = urlencode([(k, v) for k, v in query if k != "schema"])
        return PostgresStore(urlunsplit(parts._replace(query=rest)), schema=schema or "public")
    raise ValueError(
        f"unsupported memory store URL scheme {scheme or '(none)'!r}: "
        "use sqlite:///path.db or postgresql://user@host/db"
    )
