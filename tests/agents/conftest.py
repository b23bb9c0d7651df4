"""Fixtures of the agent registry tests.

backend     "sqlite" or "postgres": the CRUD tests run on both (PostgreSQL as in
            tests/memory: skipped when unreachable, a failure when CI=true)
reopen      reopen(**options) makes another unopened registry on this test's (empty) store
registry    an opened registry on the backend
agent       a real tiny agent on loopback (tests/agents/fake_agent.py)
local       an opened registry on SQLite, for the HTTP tests (no PostgreSQL needed)
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest

from nerve.agents import AgentRegistry
from nerve.agents.store import SQLiteAgentStore, agent_store_from_url
from tests.agents.fake_agent import FakeAgent
from tests.memory.conftest import backend, postgres_schema, storage_url  # noqa: F401 - fixtures


@pytest.fixture
def reopen(storage_url: str, closing: AsyncExitStack) -> Callable[..., AgentRegistry]:  # noqa: F811
    def make(**options: Any) -> AgentRegistry:
        registry = AgentRegistry(agent_store_from_url(storage_url), **options)
        closing.push_async_callback(registry.close)
        return registry

    return make


@pytest.fixture
async def registry(reopen: Callable[..., AgentRegistry]) -> AgentRegistry:
    opened = reopen()
    await opened.open()
    return opened


@pytest.fixture
def agent() -> Iterator[FakeAgent]:
    with FakeAgent("helper") as fake:
        yield fake


@pytest.fixture
def local(tmp_path: Path, closing: AsyncExitStack) -> Callable[..., Any]:
    """local(**options): an opened SQLite-backed registry; all closed at teardown."""
    made = itertools.count()

    async def make(**options: Any) -> AgentRegistry:
        registry = AgentRegistry(SQLiteAgentStore(tmp_path / f"agents{next(made)}.db"), **options)
        closing.push_async_callback(registry.close)
        await registry.open()
        return registry

    return make
