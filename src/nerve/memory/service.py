"""Memory's Python API: store, recall, events, facts, forget (SPEC ME-1..ME-7).

`Memory` is what the REST routes, the CLI, the MCP tools and the assistant call. It validates
input (a bad field is a RequestError naming it; nothing is half-written; a NUL, which no store
keeps, is refused here, other control characters at the REST and MCP edge: fields.py), keeps
the short-term tier in process (SPEC ME-1) and persists the rest through a `MemoryStore` (group
commit or the WAL in front of it: build.py). Text search goes through a `SearchCache`
(cache.py), which proves its per-user index fresh against the store before every search, so
writes and deletions made by any process are seen at once; nothing is read at open.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import defaultdict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

import orjson

from nerve.errors import RequestError
from nerve.memory.cache import SearchCache
from nerve.memory.decay import decayed_score, ranked_score
from nerve.memory.events import EVENT_IMPORTANCE, validate_event
from nerve.memory.fields import MAX_USER_ID, check_data, check_name, check_text
from nerve.memory.index import SearchIndex
from nerve.memory.model import TIERS, FactChange, Kind, Record, Tier, fact_id
from nerve.memory.store import MemoryStore, Query
from nerve.telemetry import describe, traced

__all__ = ["Memory", "Recalled", "Stored"]

log = logging.getLogger("nerve.memory")


@dataclass(frozen=True, slots=True)
class Stored:
    stored: bool
    id: str | None = None
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"stored": self.stored, "id": self.id, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Recalled:
    record: Record
    score: float

    def to_dict(self) -> dict[str, Any]:
        return {**self.record.to_dict(), "score": round(self.score, 6)}


class Memory:
    def __init__(
        self,
        store: MemoryStore,
        *,
        importance_threshold: float = 0.4,
        short_term_cap: int = 50,
        max_data_bytes: int = 64 * 1024,
        clock: Callable[[], float] = time.time,
        index: SearchIndex | None = None,
        cache_records: int = 500_000,
    ) -> None:
        self.store = store
        self.cache = SearchCache(store, index, max_records=cache_records)
        self.threshold = importance_threshold
        self.short_term_cap = short_term_cap
        self.max_data_bytes = max_data_bytes
        self.clock = clock
        self._short: defaultdict[str, deque[Record]] = defaultdict(
            lambda: deque(maxlen=short_term_cap)
        )
        self._pending: set[asyncio.Task[None]] = set()

    async def open(self) -> None:
        await self.store.open()  # and nothing else: search indexes load on demand (cache.py)

    async def close(self) -> None:
        await self.idle()
        await self.store.close()

    # -- writing ---------------------------------------------------------------------------

    @traced("memory.store", describe.stored)  # spans while tracing is on (SPEC OB-1)
    async def store_memory(
        self,
        user_id: str,
        *,
        tier: str,
        intent: str,
        data: Any,
        importance: Any,
        language: str | None = None,
        session_id: str | None = None,
        kind: Kind = "memory",
        created_at: float | None = None,
    ) -> Stored:
        """ME-1/ME-2. Below the importance threshold nothing is persisted; the answer says so."""
        record = self._record(
            user_id, tier=tier, intent=intent, data=data, importance=importance,
            language=language, session_id=session_id, kind=kind, created_at=created_at,
        )  # fmt: skip
        if record.tier == "short_term":
            self._short[record.user_id].append(record)
            return Stored(True, record.id, "short_term: kept in this process only")
        if record.importance < self.threshold:
            return Stored(
                False, None,
                f"importance {record.importance:g} is below the threshold {self.threshold:g}: "
                "not persisted",
            )  # fmt: skip
        await self.store.put([record])
        return Stored(True, record.id)

    async def record_event(
        self,
        user_id: str,
        session_id: str,
        event_type: str,
        payload: Any,
        importance: float | None = None,
    ) -> Stored:
        """ME-4: a perception event, validated, stored as a searchable episodic record."""
        clean = validate_event(event_type, check_data(payload, "payload", controls=False))
        if importance is None:
            score = clean.get("score")
            if event_type == "outcome_done" and isinstance(score, int | float):
                importance = float(score)
            else:
                importance = EVENT_IMPORTANCE[event_type]
        record = self._record(
            user_id, tier="episodic", intent=event_type, data={"type": event_type, **clean},
            importance=importance, session_id=_session(session_id), kind="event",
        )  # fmt: skip
        await self.store.put([record])  # events are always kept: they are the agent's trail
        return Stored(True, record.id)

    async def store_fact(
        self,
        user_id: str,
        entity: str,
        attribute: str,
        value: Any,
        importance: Any,
        session_id: str | None = None,
    ) -> Stored:
        """ME-5: the latest value of (entity, attribute); earlier values stay in its history."""
        for name, text in (("entity", entity), ("attribute", attribute)):
            if not isinstance(text, str) or not text.strip():
                raise RequestError(f"'{name}' must be a non-empty string", param=name)
            check_name(text, name, controls=False)
        if not isinstance(value, str | int | float | bool):
            raise RequestError("'value' must be a string, number or boolean", param="value")
        if isinstance(value, str):
            check_text(value, "value", controls=False)
        user = _user(user_id)
        now = self.clock()
        record = self._record(
            user, tier="semantic", intent="fact",
            data={"entity": entity.strip(), "attribute": attribute.strip(), "value": value},
            importance=importance, session_id=session_id, kind="fact", created_at=now,
        )  # fmt: skip
        record = replace(record, id=fact_id(user, entity, attribute))
        change = FactChange(user, entity.strip(), attribute.strip(), str(value), session_id, now)
        await self.store.put_fact(record, change)
        return Stored(True, record.id)

    async def fact_history(self, user_id: str, entity: str, attribute: str) -> list[FactChange]:
        return await self.store.fact_history(_user(user_id), entity.strip(), attribute.strip())

    async def forget(self, ids: Sequence[str]) -> int:
        for record_id in ids:
            check_text(record_id, "id", controls=False)
        gone = set(ids)
        for short in self._short.values():
            kept = [r for r in short if r.id not in gone]
            short.clear()
            short.extend(kept)
        return await self.store.delete(list(ids))

    async def owner(self, record_id: str) -> str | None:
        """Whose record `record_id` is; None when there is no such record."""
        check_text(record_id, "id", controls=False)
        for user, short in self._short.items():
            if any(r.id == record_id for r in short):
                return user
        found = await self.store.get([record_id])
        return found[0].user_id if found else None

    async def forget_user(self, user_id: str) -> int:
        user = _user(user_id)
        dropped = len(self._short.pop(user, ()))
        deleted = await self.store.delete_user(user)
        self.cache.forget(user)  # the next search would rebuild it anyway: free it now
        return dropped + deleted

    # -- reading ---------------------------------------------------------------------------

    @traced("memory.recall", describe.recalled)
    async def recall(
        self,
        user_id: str,
        *,
        intent: str | None = None,
        tier: str | None = None,
        kind: Kind | None = None,
        query: str | None = None,
        limit: int = 10,
        since: float | None = None,
        until: float | None = None,
        session_id: str | None = None,
        touch: bool = True,
    ) -> list[Recalled]:
        """ME-2/ME-7: filtered, ranked by relevance × decayed score; recall updates access."""
        user = _user(user_id)
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= 10_000:
            raise RequestError("'limit' must be an integer from 1 to 10000", param="limit")
        chosen_tier = _tier(tier) if tier is not None else None
        for name, text in (("intent", intent), ("session_id", session_id), ("query", query)):
            check_text(text, name, controls=False)  # a NUL filter: the store would refuse it
        now = self.clock()

        def keep(r: Record) -> bool:
            return (
                (intent is None or r.intent == intent)
                and (chosen_tier is None or r.tier == chosen_tier)
                and (kind is None or r.kind == kind)
                and (session_id is None or r.session_id == session_id)
                and (since is None or r.created_at >= since)
                and (until is None or r.created_at <= until)
            )

        short = [r for r in self._short.get(user, ()) if keep(r)]
        if query and query.strip():
            hits = await self.cache.search(user, query, max(limit * 10, 100))
            scored = await self._rank(user, hits, keep, limit, now)
            words = set(query.lower().split())
            scored += [
                Recalled(r, decayed_score(r, now)) for r in short
                if words & set(r.text.lower().split())
            ]  # fmt: skip
        else:
            q = Query(user, intent=intent, tier=chosen_tier, kind=kind, session_id=session_id,
                      since=since, until=until, limit=max(limit * 5, 200))  # fmt: skip
            stored = [] if chosen_tier == "short_term" else await self.store.query(q)
            scored = [Recalled(r, decayed_score(r, now)) for r in [*short, *stored]]
        scored.sort(key=lambda x: (-x.score, -x.record.created_at))
        top = scored[:limit]
        persisted = [x.record.id for x in top if x.record.tier != "short_term"]
        if touch and persisted:
            # Access statistics are bookkeeping, not an acknowledged write: a reader never
            # waits for them (through the WAL they would cost an fsync per recall).
            task = asyncio.create_task(self.store.touch(persisted, now))
            self._pending.add(task)
            task.add_done_callback(self._touched)
        return top

    async def _rank(
        self,
        user: str,
        hits: list[tuple[str, float]],
        keep: Callable[[Record], bool],
        limit: int,
        now: float,
    ) -> list[Recalled]:
        """The hits that pass `keep`, scored. They are read from the store (what exists now, and
        whose it is) best first, a few at a time: a score is at most its relevance (decay.py),
        so once `limit` of them beat the next hit's relevance, no later hit can enter."""
        scored: list[Recalled] = []
        step = max(2 * limit, 20)
        for start in range(0, len(hits), step):
            chunk = dict(hits[start : start + step])
            if len(scored) >= limit:
                kth = sorted((x.score for x in scored), reverse=True)[limit - 1]
                if next(iter(chunk.values())) < kth:
                    break
            scored += [
                Recalled(r, ranked_score(chunk[r.id], r, now))
                for r in await self.store.get(list(chunk)) if r.user_id == user and keep(r)
            ]  # fmt: skip
        return scored

    def _touched(self, task: asyncio.Task[None]) -> None:
        self._pending.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("could not record a recall: %s", task.exception())

    async def idle(self) -> None:
        """Wait until background bookkeeping (recall statistics) has been written."""
        while self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)

    # -- helpers ---------------------------------------------------------------------------

    def _record(
        self,
        user_id: str,
        *,
        tier: str,
        intent: str,
        data: Any,
        importance: Any,
        language: str | None = None,
        session_id: str | None = None,
        kind: Kind = "memory",
        created_at: float | None = None,
    ) -> Record:
        user = _user(user_id)
        if not isinstance(intent, str) or not intent.strip() or len(intent) > 100:
            raise RequestError("'intent' must be a non-empty string of at most 100 characters",
                               param="intent")  # fmt: skip
        check_name(intent, "intent", controls=False)
        if not isinstance(data, dict):
            raise RequestError("'data' must be an object", param="data")
        try:
            encoded = orjson.dumps(data)
        except TypeError as e:
            check_data(data, controls=False)  # a lone surrogate: say where
            raise RequestError(f"'data' is not JSON: {e}", param="data") from None
        if len(encoded) > self.max_data_bytes:
            raise RequestError(
                f"'data' is {len(encoded)} bytes; the limit is {self.max_data_bytes}",
                param="data",
            )
        check_data(data, encoded=encoded, controls=False)
        if (
            isinstance(importance, bool)
            or not isinstance(importance, int | float)
            or not (0.0 <= importance <= 1.0)
        ):
            raise RequestError("'importance' must be a number from 0 to 1", param="importance")
        if language is not None and (not isinstance(language, str) or len(language) > 16):
            raise RequestError("'language' must be a short language code", param="language")
        check_text(language, "language", controls=False)
        return Record.make(
            user_id=user, tier=_tier(tier), intent=intent.strip(), data=data,
            importance=float(importance), kind=kind, language=language,
            session_id=_session(session_id), created_at=created_at or self.clock(),
        )  # fmt: skip


def _user(user_id: Any) -> str:
    if not isinstance(user_id, str) or not user_id.strip() or len(user_id) > MAX_USER_ID:
        raise RequestError(
            f"'user_id' must be a non-empty string of at most {MAX_USER_ID} characters",
            param="user_id",
        )
    return check_name(user_id, "user_id", controls=False).strip()


def _tier(tier: Any) -> Tier:
    if tier not in TIERS:
        raise RequestError(f"'tier' must be one of {', '.join(TIERS)}, got {tier!r}",
                           param="tier")  # fmt: skip
    return cast(Tier, tier)


def _session(session_id: Any) -> str | None:
    if session_id is None:
        return None
    if not isinstance(session_id, str) or len(session_id) > 200:
        raise RequestError("'session_id' must be a string of at most 200 characters",
                           param="session_id")  # fmt: skip
    return check_text(session_id, "session_id", controls=False)
