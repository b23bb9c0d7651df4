"""`EventTable`: the event log in PostgreSQL, shared by every replica on the database (AD-4).

    event_log (seq BIGINT IDENTITY PRIMARY KEY, at DOUBLE PRECISION, kind TEXT, body TEXT)

`body` is the event's JSON without `seq`. A batch is one INSERT from arrays, taken under a
transaction-scoped advisory lock: identity values are drawn in commit order, so a reader that
has seen seq N never finds a smaller seq committed later (without the lock a slow transaction
could commit seq 10 after seq 11 was read, and `after=11` would skip it for good).

Filters run in SQL (kind by index; text as a case-insensitive substring of `body`, over the
newest `scan_rows` events). Retention: at most `keep_rows` events and none older than
`keep_seconds` (defaults: 200,000 events, about one 64 MiB JSONL generation, and 30 days),
pruned by whichever process writes, at most once a `prune_every` seconds.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Collection
from typing import Any

import orjson

from nerve.store.connections import PostgresPool

__all__ = ["EventTable"]

_READ = (
    "SELECT seq, body FROM event_log WHERE seq > $1"
    " AND ($2::text[] IS NULL OR kind = ANY($2::text[]))"
    " AND ($3::text IS NULL OR strpos(lower(body), $3::text) > 0)"
    " AND seq > (SELECT COALESCE(MAX(seq), 0) FROM event_log) - $4"
    " ORDER BY seq DESC LIMIT $5"
)
_INSERT = (
    "INSERT INTO event_log (at, kind, body)"
    " SELECT at, kind, body FROM unnest($1::float8[], $2::text[], $3::text[])"
    " WITH ORDINALITY AS batch(at, kind, body, n) ORDER BY n RETURNING seq"
)


class EventTable(PostgresPool):
    what = "the event log"

    def __init__(
        self,
        dsn: str,
        *,
        schema: str = "public",
        keep_rows: int = 200_000,
        keep_seconds: float = 30 * 86400,
        scan_rows: int = 100_000,
        prune_every: float = 60.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(dsn, schema=schema, min_size=1, max_size=2)
        self.keep_rows = keep_rows
        self.keep_seconds = keep_seconds
        self.scan_rows = scan_rows
        self.prune_every = prune_every
        self.clock = clock
        digest = hashlib.blake2b(f"nerve.events:{schema}".encode(), digest_size=8).digest()
        self._lock_key = int.from_bytes(digest, signed=True)
        self._pruned_at = float("-inf")

    def __str__(self) -> str:
        return f"PostgreSQL table {self.schema}.event_log"

    async def write(self, events: list[dict[str, Any]]) -> None:
        now = self.clock()
        kinds = [str(e["kind"]) for e in events]
        bodies = [
            orjson.dumps({k: v for k, v in e.items() if k != "seq"}, default=str).decode()
            for e in events
        ]
        async with self._db.acquire() as conn, conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock($1)", self._lock_key)
            rows = await conn.fetch(_INSERT, [now] * len(events), kinds, bodies)
        # Identity values of one INSERT are drawn in the ORDER BY n order: the batch's order.
        for event, seq in zip(events, sorted(r["seq"] for r in rows), strict=True):
            event["seq"] = seq
        if now - self._pruned_at >= self.prune_every:
            self._pruned_at = now
            await self.prune(now)

    async def prune(self, now: float) -> int:
        """Delete events beyond the newest `keep_rows` and older than `keep_seconds`."""
        status = await self._db.execute(
            "DELETE FROM event_log WHERE seq <= (SELECT COALESCE(MAX(seq), 0) FROM event_log) - $1"
            " OR at < $2",
            self.keep_rows,
            now - self.keep_seconds,
        )
        return int(str(status).rsplit(" ", 1)[-1])

    async def read(
        self, *, kinds: Collection[str] | None, q: str | None, after: int, limit: int
    ) -> list[dict[str, Any]]:
        needle = q.lower() if q else None
        kind_list = sorted(kinds) if kinds else None
        rows = await self._db.fetch(_READ, after, kind_list, needle, self.scan_rows, limit)
        return [{"seq": row["seq"], **orjson.loads(row["body"])} for row in reversed(rows)]
