"""Messages kept for chats nobody is connected to: the `outbox` table of `storage.url`.

The web chat's sockets live in one process each; a reply, mail summary or other message for a
chat with no socket open in the process that has it is kept here (`put`), and whichever process
the chat connects to next takes it (`claim`) and shows it. An entry's states, all in its row:

    pending (claimed_by NULL)  --claim-->  claimed (owner, claimed_until)  --done-->  deleted
    claimed --release--> pending (the socket went away before it was sent)
    claimed, claimed_until passed --> claimable again (its owner died mid-send)

`claim` is one atomic UPDATE, so two tabs of one chat connecting to two replicas at once get
each entry once between them. Migration 5 of `nerve.store.migrations`; SQLite (one
connection) and PostgreSQL (an asyncpg pool), as `nerve.assistant.jobs.store`.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from nerve.store.connections import PostgresPool, SQLiteConnection
from nerve.store.url import SQLiteURL, parse_store_url

__all__ = ["Kept", "Outbox", "outbox_from_url"]

_FIELDS = "id, channel, chat_id, body, created_at"
_RETURNING = f"RETURNING {_FIELDS}"


@dataclass(frozen=True, slots=True)
class Kept:
    id: str
    channel: str
    chat_id: str
    body: dict[str, Any]  # what the channel would have sent (for the web chat: its JSON frame)
    created_at: float


def _kept(rows: Sequence[Sequence[Any]]) -> list[Kept]:
    kept = [Kept(r[0], r[1], r[2], json.loads(r[3]), float(r[4])) for r in rows]
    return sorted(kept, key=lambda k: (k.created_at, k.id))  # RETURNING has no order


def _new_id(at: float) -> str:
    return f"{int(at * 1_000_000):015x}{uuid.uuid4().hex[:12]}"  # roughly time-ordered


class Outbox(Protocol):
    async def open(self) -> None: ...
    async def close(self) -> None: ...

    async def put(self, channel: str, chat_id: str, body: dict[str, Any], at: float) -> str:
        """Keep `body` for (channel, chat_id); its entry id."""

    async def claim(
        self, channel: str, chat_ids: Sequence[str], owner: str, now: float, until: float,
        limit: int = 100,
    ) -> list[Kept]:  # fmt: skip
        """Atomically take up to `limit` claimable entries of these chats for `owner` until
        `until`, oldest first."""

    async def done(self, entry_id: str, owner: str) -> None:
        """Shown: delete it, if `owner` still holds it."""

    async def release(self, entry_id: str, owner: str) -> None:
        """Not shown: pending again, if `owner` still holds it."""

    async def of_chat(self, channel: str, chat_id: str) -> list[Kept]:
        """Every entry kept for a chat, claimed or not, oldest first."""


class SQLiteOutbox(SQLiteConnection):
    what = "the outbox"

    async def _run(self, sql: str, args: Sequence[Any]) -> list[Any]:
        db = self._db
        async with self._lock:
            return list(await db.execute_fetchall(sql, args))

    async def put(self, channel: str, chat_id: str, body: dict[str, Any], at: float) -> str:
        entry = _new_id(at)
        sql = f"INSERT INTO outbox ({_FIELDS}) VALUES (?, ?, ?, ?, ?)"
        await self._run(sql, (entry, channel, chat_id, json.dumps(body), at))
        return entry

    async def claim(
        self, channel: str, chat_ids: Sequence[str], owner: str, now: float, until: float,
        limit: int = 100,
    ) -> list[Kept]:  # fmt: skip
        sql = (
            "UPDATE outbox SET claimed_by = ?, claimed_until = ? WHERE id IN (SELECT id FROM"
            " outbox WHERE channel = ? AND chat_id IN (SELECT value FROM json_each(?))"
            " AND (claimed_by IS NULL OR claimed_until <= ?) ORDER BY created_at, id LIMIT ?)"
            f" {_RETURNING}"
        )
        args = (owner, until, channel, json.dumps(list(chat_ids)), now, limit)
        return _kept(await self._run(sql, args))

    async def done(self, entry_id: str, owner: str) -> None:
        await self._run("DELETE FROM outbox WHERE id = ? AND claimed_by = ?", (entry_id, owner))

    async def release(self, entry_id: str, owner: str) -> None:
        sql = "UPDATE outbox SET claimed_by = NULL WHERE id = ? AND claimed_by = ?"
        await self._run(sql, (entry_id, owner))

    async def of_chat(self, channel: str, chat_id: str) -> list[Kept]:
        sql = f"SELECT {_FIELDS} FROM outbox WHERE channel = ? AND chat_id = ?"
        return _kept(await self._run(sql, (channel, chat_id)))


class PostgresOutbox(PostgresPool):
    what = "the outbox"

    async def put(self, channel: str, chat_id: str, body: dict[str, Any], at: float) -> str:
        entry = _new_id(at)
        sql = f"INSERT INTO outbox ({_FIELDS}) VALUES ($1, $2, $3, $4, $5)"
        await self._db.execute(sql, entry, channel, chat_id, json.dumps(body), at)
        return entry

    async def claim(
        self, channel: str, chat_ids: Sequence[str], owner: str, now: float, until: float,
        limit: int = 100,
    ) -> list[Kept]:  # fmt: skip
        # SKIP LOCKED: a concurrent claimer takes other rows instead of waiting for these.
        sql = (
            "UPDATE outbox SET claimed_by = $1, claimed_until = $2 WHERE id IN (SELECT id FROM"
            " outbox WHERE channel = $3 AND chat_id = ANY($4::text[])"
            " AND (claimed_by IS NULL OR claimed_until <= $5) ORDER BY created_at, id LIMIT $6"
            f" FOR UPDATE SKIP LOCKED) {_RETURNING}"
        )
        rows = await self._db.fetch(sql, owner, until, channel, list(chat_ids), now, limit)
        return _kept([tuple(r) for r in rows])

    async def done(self, entry_id: str, owner: str) -> None:
        sql = "DELETE FROM outbox WHERE id = $1 AND claimed_by = $2"
        await self._db.execute(sql, entry_id, owner)

    async def release(self, entry_id: str, owner: str) -> None:
        sql = "UPDATE outbox SET claimed_by = NULL WHERE id = $1 AND claimed_by = $2"
        await self._db.execute(sql, entry_id, owner)

    async def of_chat(self, channel: str, chat_id: str) -> list[Kept]:
        sql = f"SELECT {_FIELDS} FROM outbox WHERE channel = $1 AND chat_id = $2"
        rows = await self._db.fetch(sql, channel, chat_id)
        return _kept([tuple(r) for r in rows])


def outbox_from_url(url: str) -> Outbox:
    """The outbox for `storage.url`, not yet opened; ValueError names the scheme, never the URL."""
    where = parse_store_url(url, what="outbox")
    if isinstance(where, SQLiteURL):
        return SQLiteOutbox(where.path)
    return PostgresOutbox(where.dsn, schema=where.schema)
