"""What goes in comes out, on both backends (ME-2, ME-3): text of any script and size, numbers
of every kind, nesting and key order; and NUL, which PostgreSQL cannot store, refused by both."""

from __future__ import annotations

import math
from dataclasses import replace

import orjson
import pytest

from nerve.memory.store import Query
from tests.memory.factories import rec


async def test_unicode_emoji_and_megabytes_of_text_round_trip_exactly(store):
    """ME-2: any non-NUL text survives, in data, keys and columns."""
    big = "வணக்கம் नमस्ते నమస్కారం 你好 مرحبا 👋🏽🧠 é\u0301 \U0010ffff \t\r\n\\\"'" * 25_000
    a = rec(
        "用户-👤",
        intent="நினைவு",
        language="ta",
        session_id="セッション",
        data={"text": big, "ключ 🔑": ["ü", {"ß": "ǅ"}]},
    )
    assert len(a.text) > 1_000_000
    await store.put([a])
    assert await store.get([a.id]) == [a]


async def test_floats_integers_and_nested_json_round_trip_exactly(store):
    """ME-2: numbers keep their type and value, keys their order, nesting its shape."""
    data = {
        "z": [0.1, 1e16, 1e300, 5e-324, -0.0, 1.7976931348623157e308, 123456789.123456789],
        "a": {"int": 2**53 + 1, "neg": -(2**63), "u64": 2**64 - 1, "bool": True, "none": None},
        "m": [[[], {}], [{"deep": [{"deeper": ["x", 1, 2.5]}]}]],
    }
    a = rec(data=data, importance=0.1 + 0.2, created_at=1_700_000_000.123456789)
    await store.put([a])
    [got] = await store.get([a.id])
    assert got == a
    assert orjson.dumps(got.data) == orjson.dumps(data)  # 1e16 is still a float, keys in order


async def test_nul_characters_are_refused_before_anything_is_stored(store):
    """ME-3: PostgreSQL text cannot hold NUL, so neither backend accepts it."""
    good = rec(n=1)
    for bad in (
        rec(n=2, data={"t": "a\x00"}),
        rec(n=3, intent="x\x00"),
        rec(n=4, data={"\x00": 1}),
    ):
        with pytest.raises(ValueError, match="NUL"):
            await store.put([good, bad])
    assert await store.query(Query("u")) == []
    escaped = rec(n=5, data={"t": "a\\u0000b"})  # a backslash, not a NUL
    await store.put([escaped])
    assert await store.get([escaped.id]) == [escaped]


@pytest.mark.parametrize("field", ["importance", "created_at", "updated_at", "accessed_at"])
async def test_a_nan_time_or_importance_is_refused_by_both_backends(store, field):
    """ME-3: SQLite would store NaN as NULL and PostgreSQL as NaN, so neither takes it."""
    with pytest.raises(ValueError, match="finite"):
        await store.put([replace(rec(), **{field: math.nan})])
    with pytest.raises(ValueError, match="finite"):
        await store.touch([], math.inf)
    assert await store.query(Query("u")) == []
