"""The records memory keeps, shared by every backend, the WAL, the index and the service.

A `Record` is one remembered thing. `kind` says what it is: a plain memory stored by an agent, a
perception event (ME-4), a fact triple (ME-5, the latest value of an (entity, attribute) pair), a
conversation turn, or a summary (ME-9). `text` is what search reads: every string value in `data`
plus the intent, derived once when the record is made.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, Protocol

__all__ = [
    "KINDS",
    "TIERS",
    "Entry",
    "FactChange",
    "Indexed",
    "Kind",
    "Record",
    "Tier",
    "fact_id",
    "new_id",
    "searchable_text",
]

Tier = Literal["short_term", "episodic", "semantic"]
Kind = Literal["memory", "event", "fact", "turn", "summary"]
TIERS: tuple[Tier, ...] = ("short_term", "episodic", "semantic")
KINDS: tuple[Kind, ...] = ("memory", "event", "fact", "turn", "summary")


def new_id() -> str:
    """Sortable by creation time (ms prefix), unique (random suffix): 32 hex chars."""
    return f"{int(time.time() * 1000):012x}{uuid.uuid4().hex[:20]}"


@dataclass(frozen=True, slots=True)
class Record:
    user_id: str
    tier: Tier
    intent: str
    data: dict[str, Any]
    importance: float
    kind: Kind = "memory"
    language: str | None = None
    session_id: str | None = None
    id: str = field(default_factory=new_id)
    created_at: float = field(default_factory=time.time)  # epoch seconds
    updated_at: float = 0.0  # 0: same as created_at
    accessed_at: float = 0.0  # 0: never recalled
    access_count: int = 0
    text: str = ""  # filled by `make` from intent + data

    @classmethod
    def make(cls, **fields: Any) -> Record:
        """A record with its derived fields filled: `text`, and `updated_at` (= created_at)."""
        if not fields.get("text"):
            fields["text"] = searchable_text(fields["intent"], fields["data"])
        if not fields.get("updated_at"):
            fields.setdefault("created_at", time.time())
            fields["updated_at"] = fields["created_at"]
        return cls(**fields)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "user_id": self.user_id,
            "tier": self.tier,
            "kind": self.kind,
            "intent": self.intent,
            "language": self.language,
            "session_id": self.session_id,
            "data": self.data,
            "importance": self.importance,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "accessed_at": self.accessed_at or None,
            "access_count": self.access_count,
        }


class Indexed(Protocol):
    """What the search index reads of a record: a `Record`, or an `Entry` from the store."""

    @property
    def id(self) -> str: ...
    @property
    def user_id(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def session_id(self) -> str | None: ...
    @property
    def created_at(self) -> float: ...
    @property
    def text(self) -> str: ...


class Entry(NamedTuple):
    """A record as the search index needs it, read by `MemoryStore.changed` without decoding its
    data; `version` is the user's change version that last wrote it."""

    id: str
    user_id: str
    kind: str
    session_id: str | None
    created_at: float
    text: str
    version: int


@dataclass(frozen=True, slots=True)
class FactChange:
    """One value an (entity, attribute) pair had: the history behind a fact record."""

    user_id: str
    entity: str
    attribute: str
    value: str
    session_id: str | None
    changed_at: float


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield str(value)


def searchable_text(intent: str, data: Mapping[str, Any]) -> str:
    """Every string (and number) value in `data`, then the intent: what text search reads."""
    return " ".join([*_strings(data), intent.replace("_", " ")]).strip()


def fact_id(user_id: str, entity: str, attribute: str) -> str:
    """One record per (user, entity, attribute): the id is derived, so an upsert replaces it."""
    key = "\x1f".join((user_id, entity.strip().lower(), attribute.strip().lower()))
    return "fact-" + uuid.uuid5(uuid.NAMESPACE_URL, key).hex
