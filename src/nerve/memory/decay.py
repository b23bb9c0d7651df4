"""Decay (SPEC ME-7): score = base importance × time decay × frequency.

Time decay halves the recency part every `half_life_days` since the record was last recalled (or
created), but never takes away more than half of a score: relevance stays the main signal and an
old, important memory still surfaces. Frequency grows with the log of the recall count, capped,
so a memory recalled often rises without drowning everything else.
"""

from __future__ import annotations

import math

from nerve.memory.model import Record

__all__ = ["DAY", "decayed_score", "ranked_score"]

DAY = 86_400.0


def decayed_score(record: Record, now: float, *, half_life_days: float = 30.0) -> float:
    last = record.accessed_at or record.created_at
    age_days = max(0.0, now - last) / DAY
    time_factor = 0.5 + 0.5 * 0.5 ** (age_days / half_life_days)
    frequency = min(2.0, 1.0 + 0.25 * math.log1p(record.access_count))
    return float(record.importance * time_factor * frequency)


def ranked_score(relevance: float, record: Record, now: float) -> float:
    """With a text query: relevance leads, and the decayed score (0..2) moves it by at most a
    quarter, so importance and recent use break ties without burying the best match."""
    return relevance * (0.75 + 0.125 * decayed_score(record, now))
