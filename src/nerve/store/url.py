"""What `storage.url` names: one database for every store on it (memory, agents, jobs, keys).

sqlite:///relative/path.db      a file relative to the working directory
sqlite:////abs/path.db          an absolute path
sqlite:///:memory:              an in-process database (gone when closed)
postgresql://user@host:5432/db  PostgreSQL (also postgres://); ?schema=NAME picks the schema
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["PostgresURL", "SQLiteURL", "parse_store_url"]


@dataclass(frozen=True, slots=True)
class SQLiteURL:
    path: Path | str  # ":memory:" or a file


@dataclass(frozen=True, slots=True)
class PostgresURL:
    dsn: str  # as asyncpg takes it, without nerve's own `schema` parameter
    schema: str


def parse_store_url(url: str, *, what: str = "store") -> SQLiteURL | PostgresURL:
    """`storage.url`, parsed once for every store on it (memory, the agent registry).

    Raises ValueError naming the scheme, never the URL (it may hold a password), and naming the
    extra to install when PostgreSQL's driver is missing.
    """
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme == "sqlite":
        if not url.startswith("sqlite:///") or len(url) == len("sqlite:///"):
            raise ValueError(
                "a SQLite storage URL is sqlite:///relative/path.db or sqlite:////abs/path.db"
            )
        path = url[len("sqlite:///") :]
        return SQLiteURL(path if path == ":memory:" else Path(path).expanduser())
    if scheme in ("postgresql", "postgres"):
        try:
            import asyncpg  # noqa: F401 - to fail here, with the fix, when it is missing
        except ImportError as exc:  # asyncpg is the optional extra nerve[postgres]
            raise ValueError(
                f"a {scheme}:// {what} needs asyncpg: pip install 'nerve[postgres]'"
            ) from exc
        parts = urlsplit(url)
        query = parse_qsl(parts.query, keep_blank_values=True)
        # asyncpg would send an unknown parameter such as schema to the server as a setting.
        schema = next((v for k, v in query if k == "schema"), "public")
        rest = urlencode([(k, v) for k, v in query if k != "schema"])
        return PostgresURL(urlunsplit(parts._replace(query=rest)), schema or "public")
    raise ValueError(
        f"unsupported storage URL scheme {scheme or '(none)'!r}: "
        "use sqlite:///path.db or postgresql://user@host/db"
    )
