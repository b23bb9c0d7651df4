"""Where registered agents are kept: the memory database (`storage.url`), table `agents`.

One small protocol, two backends: SQLite (one connection; the registry is small and rarely
written) and PostgreSQL (an asyncpg pool). Both apply the shared migrations of
`nerve.store.migrations` at open, so the registry and memory agree on the schema version.
To add a backend: implement `AgentStore`, run tests/agents against it, add its scheme below.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from nerve.agents.model import Agent
from nerve.store.connections import PostgresPool, SQLiteConnection
from nerve.store.url import SQLiteURL, parse_store_url

if TYPE_CHECKING:  # asyncpg is only needed by the PostgreSQL backend
    pass

__all__ = ["AgentStore", "PostgresAgentStore", "SQLiteAgentStore", "agent_store_from_url"]

_COLUMNS = "agent_name, endpoint, capabilities, created_at, updated_at"


class AgentStore(Protocol):
    async def open(self) -> None:
        """Connect and apply pending migrations; a no-op when already open."""

    async def close(self) -> None: ...

    async def upsert(self, agent: Agent) -> tuple[Agent, bool]:
        """Insert, or update endpoint/capabilities/updated_at keeping created_at. Returns the
        stored agent and whether it was created."""

    async def get(self, agent_name: str) -> Agent | None: ...

    async def all(self) -> list[Agent]:
        """Every agent, by name."""

    async def delete(self, agent_name: str) -> bool:
        """Whether it existed."""


def _row(agent: Agent) -> tuple[Any, ...]:
    caps = orjson.dumps(list(agent.capabilities)).decode()
    return (agent.agent_name, agent.endpoint, caps, agent.created_at, agent.updated_at)


def _agent(row: Sequence[Any]) -> Agent:
    name, endpoint, caps, created, updated = row
    return Agent(name, endpoint, tuple(orjson.loads(caps)), float(created), float(updated))


class SQLiteAgentStore(SQLiteConnection):
    what = "the agent registry"

    async def upsert(self, agent: Agent) -> tuple[Agent, bool]:
        async with self._lock:
            db = self._db
            await db.execute("BEGIN IMMEDIATE")
            try:
                rows = list(
                    await db.execute_fetchall(
                        "SELECT created_at FROM agents WHERE agent_name = ?", (agent.agent_name,)
                    )
                )
                await db.execute(
                    f"INSERT INTO agents ({_COLUMNS}) VALUES (?, ?, ?, ?, ?)"
                    " ON CONFLICT (agent_name) DO UPDATE SET endpoint = excluded.endpoint,"
                    " capabilities = excluded.capabilities, updated_at = excluded.updated_at",
                    _row(agent),
                )
                await db.execute("COMMIT")
            except BaseException:
                await db.rollback()
                raise
        if rows:
            return replace(agent, created_at=float(rows[0][0])), False
        return agent, True

    async def get(self, agent_name: str) -> Agent | None:
        async with self._lock:
            rows = list(
                await self._db.execute_fetchall(
                    f"SELECT {_COLUMNS} FROM agents WHERE agent_name = ?", (agent_name,)
                )
            )
        return _agent(rows[0]) if rows else None

    async def all(self) -> list[Agent]:
        async with self._lock:
            rows = await self._db.execute_fetchall(
                f"SELECT {_COLUMNS} FROM agents ORDER BY agent_name"
            )
        return [_agent(row) for row in rows]

    async def delete(self, agent_name: str) -> bool:
        async with self._lock:
            cursor = await self._db.execute(
                "DELETE FROM agents WHERE agent_name = ?", (agent_name,)
            )
        return cursor.rowcount > 0


class PostgresAgentStore(PostgresPool):
    what = "the agent registry"

    async def upsert(self, agent: Agent) -> tuple[Agent, bool]:
        # xmax = 0 only on a freshly inserted row version: created vs updated in one statement.
        row = await self._db.fetchrow(
            f"INSERT INTO agents ({_COLUMNS}) VALUES ($1, $2, $3, $4, $5)"
            " ON CONFLICT (agent_name) DO UPDATE SET endpoint = excluded.endpoint,"
            " capabilities = excluded.capabilities, updated_at = excluded.updated_at"
            f" RETURNING {_COLUMNS}, (xmax = 0) AS inserted",
            *_row(agent),
        )
        assert row is not None  # INSERT ... RETURNING always returns the row
        return _agent(tuple(row)[:5]), bool(row["inserted"])

    async def get(self, agent_name: str) -> Agent | None:
        row = await self._db.fetchrow(
            f"SELECT {_COLUMNS} FROM agents WHERE agent_name = $1", agent_name
        )
        return _agent(tuple(row)) if row is not None else None

    async def all(self) -> list[Agent]:
        rows = await self._db.fetch(f"SELECT {_COLUMNS} FROM agents ORDER BY agent_name")
        return [_agent(tuple(row)) for row in rows]

    async def delete(self, agent_name: str) -> bool:
        status = await self._db.execute("DELETE FROM agents WHERE agent_name = $1", agent_name)
        return str(status).rsplit(" ", 1)[-1] != "0"


def agent_store_from_url(url: str) -> AgentStore:
    """The store for `storage.url` (the same URLs as memory's), not yet opened. Raises
    ValueError naming the scheme, never the URL (it may hold a password)."""
    where = parse_store_url(url, what="agent registry")
    if isinstance(where, SQLiteURL):
        return SQLiteAgentStore(where.path)
    return PostgresAgentStore(where.dsn, schema=where.schema)
