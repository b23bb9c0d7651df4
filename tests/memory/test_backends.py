"""Choosing a backend from `storage.url` (ME-3, ME-10)."""

from __future__ import annotations

from pathlib import Path

import pytest

from nerve.memory.backends import store_from_url
from nerve.memory.model import Record
from nerve.memory.postgres import PostgresStore
from nerve.memory.sqlite import SQLiteStore
from nerve.memory.store import Query


def test_sqlite_urls_with_three_slashes_are_relative_and_with_four_absolute():
    """ME-3: sqlite:///relative/path.db and sqlite:////abs/path.db."""
    relative = store_from_url("sqlite:///data/memory.db")
    absolute = store_from_url("sqlite:////var/lib/nerve/memory.db")
    assert isinstance(relative, SQLiteStore) and relative.path == Path("data/memory.db")
    assert isinstance(absolute, SQLiteStore) and absolute.path == Path("/var/lib/nerve/memory.db")
    memory = store_from_url("sqlite:///:memory:")
    assert isinstance(memory, SQLiteStore) and memory.path == ":memory:"


@pytest.mark.parametrize("scheme", ["postgresql", "postgres"])
def test_postgres_urls_give_a_postgres_store_with_the_schema_taken_out(scheme):
    """ME-3: ?schema= picks the schema and is not sent to the server as a setting."""
    store = store_from_url(f"{scheme}://nerve:pw@db:5432/nerve?schema=mem&sslmode=disable")
    assert isinstance(store, PostgresStore)
    assert store.schema == "mem"
    assert store.dsn == f"{scheme}://nerve:pw@db:5432/nerve?sslmode=disable"
    assert store_from_url(f"{scheme}://db/nerve").schema == "public"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "url", ["mysql://root:secret@db/x", "sqlite://memory.db", "sqlite:///", "memory.db"]
)
def test_other_urls_are_refused_without_echoing_secrets(url):
    """ME-10: a bad URL names what is wrong, never the password."""
    with pytest.raises(ValueError) as caught:
        store_from_url(url)
    assert "secret" not in str(caught.value)


async def test_a_store_from_a_url_opens_and_works(tmp_path):
    """ME-3: the URL's store is a working store, its directory created."""
    store = store_from_url(f"sqlite:///{tmp_path}/nested/memory.db")
    await store.open()
    try:
        record = Record.make(user_id="u", tier="semantic", intent="n", data={}, importance=0.5)
        await store.put([record])
        assert await store.query(Query("u")) == [record]
    finally:
        await store.close()
    assert (tmp_path / "nested" / "memory.db").exists()
