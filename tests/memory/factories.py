"""Records for the memory tests: small, deterministic, one second apart."""

from __future__ import annotations

from typing import Any

from nerve.memory.model import FactChange, Record, fact_id

T0 = 1_800_000_000.0


def rec(user: str = "u", n: int = 0, **fields: Any) -> Record:
    fields.setdefault("tier", "episodic")
    fields.setdefault("intent", "note")
    fields.setdefault("data", {"text": f"note {n}"})
    fields.setdefault("importance", 0.5)
    fields.setdefault("created_at", T0 + n)
    return Record.make(user_id=user, **fields)


def fact(
    user: str, entity: str, attribute: str, value: Any, at: float
) -> tuple[Record, FactChange]:
    record = rec(
        user,
        id=fact_id(user, entity, attribute),
        kind="fact",
        tier="semantic",
        intent="fact",
        data={"entity": entity, "attribute": attribute, "value": value},
        created_at=at,
    )
    return record, FactChange(user, entity, attribute, value, "s1", at)
