"""The line format of `nerve memory export|import`: one JSON object per line, UTF-8.

A record line is `Record.to_dict()`, as the API returns records (kind memory, event, fact, turn
or summary). Facts carry their value history in lines of their own, in the order appended:

    {"kind": "fact_change", "user_id": "u", "entity": "alice", "attribute": "city",
     "value": "Chennai", "session_id": null, "changed_at": 1800000000.0}

`decode_line` refuses, as `BadLine` with the reason, anything the stores would refuse or store
differently: not JSON, a missing or unknown field, a wrong type, a tier or kind nerve does not
know, a number that is not finite, an importance outside 0..1, a NUL character, a fact whose id
is not `fact_id(user_id, entity, attribute)`. `text` (derived from intent and data) and `score`
(a recall's) are ignored: `text` is derived again. Optional in a record line: language and
session_id (null), updated_at (created_at), accessed_at (never), access_count (0).
"""

from __future__ import annotations

import math
from typing import Any, cast

import orjson

from nerve.memory.codec import change_row, record_row
from nerve.memory.model import (
    KINDS,
    TIERS,
    FactChange,
    Kind,
    Record,
    Tier,
    fact_id,
    searchable_text,
)

__all__ = ["FACT_CHANGE", "BadLine", "decode_line", "encode_change", "encode_record"]

FACT_CHANGE = "fact_change"
_RECORD_FIELDS = frozenset(
    ("id", "user_id", "tier", "kind", "intent", "language", "session_id", "data", "importance",
     "created_at", "updated_at", "accessed_at", "access_count", "text", "score")
)  # fmt: skip
_RECORD_NEEDS = ("id", "user_id", "tier", "kind", "intent", "data", "importance", "created_at")
_CHANGE_NEEDS = ("user_id", "entity", "attribute", "value", "changed_at")
_CHANGE_FIELDS = frozenset(
    ("kind", "user_id", "entity", "attribute", "value", "session_id", "changed_at")
)


class BadLine(ValueError):
    """Why a line cannot be imported."""


def encode_record(record: Record) -> bytes:
    return orjson.dumps(record.to_dict(), option=orjson.OPT_APPEND_NEWLINE)


def encode_change(change: FactChange) -> bytes:
    line = {
        "kind": FACT_CHANGE,
        "user_id": change.user_id,
        "entity": change.entity,
        "attribute": change.attribute,
        "value": change.value,
        "session_id": change.session_id,
        "changed_at": change.changed_at,
    }
    return orjson.dumps(line, option=orjson.OPT_APPEND_NEWLINE)


def decode_line(raw: bytes | str) -> Record | FactChange:
    """The record or fact change on one line, or BadLine saying what is wrong with it."""
    try:
        line = orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        raise BadLine(f"not JSON ({e})") from None
    if not isinstance(line, dict):
        raise BadLine(f"a line must be a JSON object, not {type(line).__name__}")
    item = _change(line) if line.get("kind") == FACT_CHANGE else _record(line)
    # JSON writes NUL only as the escape \u0000: without one, the store's own check (codec:
    # NUL, finite numbers, which are checked here already) cannot fail, so it is skipped.
    if b"\\u0000" in (raw if isinstance(raw, bytes) else raw.encode()):
        try:
            change_row(item) if isinstance(item, FactChange) else record_row(item)
        except ValueError as e:
            raise BadLine(str(e)) from None
    return item


def _record(line: dict[str, Any]) -> Record:
    kind, tier = line.get("kind"), line.get("tier")
    if kind not in KINDS and "kind" in line:
        raise BadLine(
            f"'kind' must be one of {', '.join((*KINDS, FACT_CHANGE))}, got {_what(kind)}"
        )
    _fields(line, _RECORD_FIELDS, _RECORD_NEEDS)
    if tier not in TIERS:
        raise BadLine(f"'tier' must be one of {', '.join(TIERS)}, got {_what(tier)}")
    data = line.get("data")
    if not isinstance(data, dict):
        raise BadLine(f"'data' must be an object, got {_what(data)}")
    importance = _number(line, "importance")
    if not 0.0 <= importance <= 1.0:
        raise BadLine(f"'importance' must be from 0 to 1, got {importance:g}")
    count = line.get("access_count", 0)
    if type(count) is not int or count < 0:
        raise BadLine(f"'access_count' must be a whole number >= 0, got {_what(count)}")
    intent, created = _text(line, "intent"), _number(line, "created_at")
    record = Record(  # as Record.make makes it, without its copies (this is the hot path)
        id=_text(line, "id"),
        user_id=_text(line, "user_id"),
        tier=cast(Tier, tier),
        kind=cast(Kind, kind),
        intent=intent,
        language=_text(line, "language", optional=True),
        session_id=_text(line, "session_id", optional=True),
        data=data,
        importance=importance,
        created_at=created,
        updated_at=_number(line, "updated_at", optional=True) or created,
        accessed_at=_number(line, "accessed_at", optional=True),
        access_count=count,
        text=searchable_text(intent, data),
    )
    if kind == "fact":
        _fact(record)
    return record


def _fact(record: Record) -> None:
    entity, attribute = record.data.get("entity"), record.data.get("attribute")
    if not isinstance(entity, str) or not isinstance(attribute, str):
        raise BadLine("a fact's data must hold 'entity' and 'attribute' strings")
    expected = fact_id(record.user_id, entity, attribute)
    if record.id != expected:
        raise BadLine(
            f"a fact's id must be fact_id(user_id, entity, attribute) = {expected!r}, "
            f"got {record.id!r}"
        )


def _change(line: dict[str, Any]) -> FactChange:
    _fields(line, _CHANGE_FIELDS, _CHANGE_NEEDS)
    return FactChange(
        user_id=_text(line, "user_id"),
        entity=_text(line, "entity"),
        attribute=_text(line, "attribute"),
        value=_text(line, "value", empty=True),
        session_id=_text(line, "session_id", optional=True),
        changed_at=_number(line, "changed_at"),
    )


def _fields(line: dict[str, Any], known: frozenset[str], needed: tuple[str, ...]) -> None:
    for name in needed:
        if name not in line:
            raise BadLine(f"missing {name!r}")
    unknown = line.keys() - known
    if unknown:  # refused, not dropped: a field this nerve does not know would be lost
        raise BadLine(f"unknown field {sorted(unknown)[0]!r}")


def _text(line: dict[str, Any], name: str, *, optional: bool = False, empty: bool = False) -> Any:
    value = line.get(name)
    if value is None and optional:
        return None
    if not isinstance(value, str) or (not value and not empty):
        need = "a string" if empty else "a non-empty string"
        raise BadLine(f"{name!r} must be {need}{' or null' if optional else ''}, "
                      f"got {_what(value)}")  # fmt: skip
    return value


def _number(line: dict[str, Any], name: str, *, optional: bool = False) -> float:
    value = line.get(name)
    if value is None and optional:
        return 0.0  # updated_at: created_at; accessed_at: never
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise BadLine(f"{name!r} must be a finite number, got {_what(value)}")
    return float(value)


def _what(value: Any) -> str:
    text = orjson.dumps(value).decode() if value is None or isinstance(value, bool) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
