"""The `store` fixture: every memory test runs once on SQLite and once on PostgreSQL (ME-3).

PostgreSQL is the local server (`NERVE_TEST_POSTGRES_DSN`, default
postgresql://postgres@127.0.0.1:5432/test). Each test session gets a schema of its own, emptied
before every test and dropped at the end. When the server cannot be reached, the PostgreSQL
tests are skipped, except in CI (`CI=true`), where an unreachable service is a failure.

    store         an opened store (opening it again is a no-op; teardown closes it)
    reopen        reopen(**options) makes another unopened store on the same data
    backend       "sqlite" or "postgres"
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

import asyncpg
import pytest

from nerve.memory.postgres import PostgresStore
from nerve.memory.sqlite import SQLiteStore
from nerve.memory.store import MemoryStore

DEFAULT_DSN = "postgresql://postgres@127.0.0.1:5432/test"
T = TypeVar("T")


def _in_own_loop(coro: Coroutine[Any, Any, T]) -> T:
    """Run `coro` on a fresh event loop in another thread: session-scoped setup and teardown
    stay clear of the per-test loops pytest-asyncio manages."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def _where(dsn: str) -> str:
    """The DSN without its password, for messages."""
    parts = urlsplit(dsn)
    host = parts.hostname or "localhost"
    return f"{host}:{parts.port or 5432}{parts.path}"


async def _admin(dsn: str, sql: str) -> None:
    conn = await asyncpg.connect(dsn, timeout=5)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


@pytest.fixture(scope="session")
def postgres_schema() -> Iterator[tuple[str, str]]:
    """(dsn, schema) for this session, or a skip (a failure when CI=true) naming the service."""
    dsn = os.environ.get("NERVE_TEST_POSTGRES_DSN", DEFAULT_DSN)
    schema = f"nerve_test_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    try:
        _in_own_loop(_admin(dsn, "SELECT 1"))
    except Exception as exc:  # refused, timed out, no such database or role: all "unreachable"
        reason = f"PostgreSQL is not reachable at {_where(dsn)} ({type(exc).__name__}: {exc})"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; CI must run the PostgreSQL tests", pytrace=False)
        pytest.skip(f"{reason}; set NERVE_TEST_POSTGRES_DSN to run the PostgreSQL tests")
    yield dsn, schema
    _in_own_loop(_admin(dsn, f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def storage_url(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """`storage.url` of an empty database of this backend: what the stores beside memory's
    (agents, jobs) open, so their tests run on both backends as memory's do."""
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 'nerve.db'}"
    dsn, schema = request.getfixturevalue("postgres_schema")
    await _admin(dsn, f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    return f"{dsn}?schema={schema}"


@pytest.fixture
async def reopen(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path, closing: AsyncExitStack
) -> Callable[..., MemoryStore]:
    """A factory of unopened stores on this test's (empty) database; all closed at teardown."""
    if backend == "postgres":
        dsn, schema = request.getfixturevalue("postgres_schema")
        await _admin(dsn, f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')

    def make(**options: Any) -> MemoryStore:
        store: MemoryStore
        if backend == "sqlite":
            store = SQLiteStore(tmp_path / "memory" / "memory.db", **options)
        else:
            store = PostgresStore(dsn, schema=schema, **options)
        closing.push_async_callback(store.close)
        return store

    return make


@pytest.fixture
async def store(reopen: Callable[..., MemoryStore]) -> MemoryStore:
    opened = reopen()
    await opened.open()
    return opened
