"""Memory's input types: the one set REST bodies and MCP tool arguments are held to.

`/api/memory/*` takes the bodies below; the MCP memory tools take the same fields as arguments,
typed with the same aliases (fields.py for the text rules; `Importance`, `Limit`, `EventSession`
and `MaxContexts` here), so the OpenAPI and MCP schemas state the same rules and a bad value
gets the same answer. `Memory` checks again what no store can keep (its Python callers, the
CLI and the assistant, pass no pydantic), with the same limits.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field
from pydantic_core import PydanticCustomError

from nerve.memory.events import EventType, payload_rules
from nerve.memory.fields import (
    TEXT,
    WHOLE,
    Data,
    FactPart,
    FactValue,
    Intent,
    Language,
    Query,
    SessionId,
    Text,
    UserId,
)
from nerve.memory.model import Kind, Tier

__all__ = [
    "ContextBody",
    "EventBody",
    "EventSession",
    "FactBody",
    "Importance",
    "Limit",
    "MaxContexts",
    "RecallBody",
    "StoreBody",
    "epoch",
]

Importance = Annotated[float, Field(ge=0, le=1, description="0..1; below the threshold: not kept")]
Limit = Annotated[int, Field(ge=1, le=10_000), WHOLE]
MaxContexts = Annotated[int, Field(ge=1, le=50), WHOLE]
EventSession = Annotated[str, Field(min_length=1, max_length=200), TEXT]  # events need one

_RFC3339 = re.compile(r"\d{4}-\d\d-\d\d[Tt]\d\d:\d\d:\d\d(?:\.\d+)?(?:[Zz]|[+-]\d\d:\d\d)")


def _rfc3339(value: Any) -> Any:
    if isinstance(value, str) and not _RFC3339.fullmatch(value):
        raise PydanticCustomError(
            "datetime", "must be an RFC 3339 date-time (2026-01-31T09:00:00Z) or epoch seconds"
        )
    return value


# What the schema's `format: date-time` says: a time with its offset, never a local guess.
Since = Annotated[datetime, Field(strict=False), BeforeValidator(_rfc3339)]


class _Body(BaseModel):
    # Strict: a JSON false is not 0, a 1 is not true (what the schema's types say).
    model_config = ConfigDict(extra="forbid", strict=True)


class StoreBody(_Body):
    user_id: UserId
    tier: Tier
    intent: Intent
    data: Data
    importance: Importance
    language: Language | None = None
    session_id: SessionId | None = None


class RecallBody(_Body):
    user_id: UserId
    intent: Text | None = None
    tier: Tier | None = None
    kind: Kind | None = None
    query: Query | None = None
    limit: Limit = 10
    since: Since | float | None = None
    session_id: SessionId | None = None


class EventBody(_Body):
    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra=payload_rules)

    user_id: UserId
    session_id: EventSession
    type: EventType
    payload: Data
    importance: Importance | None = None


class FactBody(_Body):
    user_id: UserId
    entity: FactPart
    attribute: FactPart
    value: FactValue
    importance: Importance
    session_id: SessionId | None = None


class ContextBody(_Body):
    user_id: UserId
    session_id: SessionId | None = None
    query: Query | None = None
    max_contexts: MaxContexts | None = None


def epoch(value: datetime | float | None) -> float | None:
    return value.timestamp() if isinstance(value, datetime) else value
