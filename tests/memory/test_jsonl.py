"""The line format of `nerve memory export|import` (jsonl.py): what a line holds, and every way a
line is refused, each with a reason that names the field (ME-2, ME-5)."""

from __future__ import annotations

import orjson
import pytest

from nerve.memory.jsonl import BadLine, decode_line, encode_change, encode_record
from nerve.memory.model import KINDS, FactChange, Record
from tests.memory.factories import T0, fact, rec


def line(**fields) -> bytes:
    base = orjson.loads(encode_record(rec(n=1)))
    base.update(fields)
    return orjson.dumps({k: v for k, v in base.items() if v is not ...})


@pytest.mark.parametrize("kind", [k for k in KINDS if k != "fact"])
def test_a_record_line_is_to_dict_and_decodes_to_the_same_record(kind):
    record = rec(n=3, kind=kind, language="ta", session_id="s1", data={"text": "வணக்கம்",
                 "n": [1, 1e16, 0.1, None, True], "deep": {"x": "y"}},
                 accessed_at=T0 + 9, access_count=4)  # fmt: skip
    encoded = encode_record(record)
    assert encoded.endswith(b"\n") and encoded.count(b"\n") == 1
    assert orjson.loads(encoded) == record.to_dict()
    assert decode_line(encoded) == record


def test_facts_and_their_history_round_trip():
    record, change = fact("u", "Alice", "City", "Chennai", T0)
    assert decode_line(encode_record(record)) == record
    assert orjson.loads(encode_change(change)) == {
        "kind": "fact_change", "user_id": "u", "entity": "Alice", "attribute": "City",
        "value": "Chennai", "session_id": "s1", "changed_at": T0,
    }  # fmt: skip
    assert decode_line(encode_change(change)) == change
    no_session = FactChange("u", "Alice", "City", "", None, T0)
    assert decode_line(encode_change(no_session)) == no_session


def test_text_is_derived_never_read_and_score_is_ignored():
    decoded = decode_line(line(text="something else entirely", score=0.9))
    assert isinstance(decoded, Record)
    assert decoded.text == rec(n=1).text == "note 1 note"


def test_optional_fields_take_the_values_a_new_record_has():
    decoded = decode_line(
        line(language=..., session_id=..., updated_at=..., accessed_at=..., access_count=...)
    )
    assert isinstance(decoded, Record)
    assert (decoded.language, decoded.session_id, decoded.accessed_at, decoded.access_count) == (
        None, None, 0.0, 0
    )  # fmt: skip
    assert decoded.updated_at == decoded.created_at == T0 + 1


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        (b'{"id": "x",', "not JSON"),
        (b"[1, 2]", "a line must be a JSON object, not list"),
        (b'"\\ud800"', "not JSON"),
        (b'{"id": NaN}', "not JSON"),
        (line(id=...), "missing 'id'"),
        (line(user_id=""), "'user_id' must be a non-empty string, got ''"),
        (line(user_id=7), "'user_id' must be a non-empty string, got 7"),
        (
            line(kind="memo"),
            "'kind' must be one of memory, event, fact, turn, summary, fact_change, got 'memo'",
        ),
        (line(tier="long_term"), "'tier' must be one of short_term, episodic, semantic"),
        (line(data=[1]), "'data' must be an object, got [1]"),
        (line(importance=1.5), "'importance' must be from 0 to 1, got 1.5"),
        (line(importance=True), "'importance' must be a finite number, got true"),
        (line(created_at="yesterday"), "'created_at' must be a finite number, got 'yesterday'"),
        (line().replace(b'"created_at":1800000001.0', b'"created_at":1e999'), "infinity"),
        (line(access_count=-1), "'access_count' must be a whole number >= 0, got -1"),
        (line(access_count=1.5), "'access_count' must be a whole number >= 0, got 1.5"),
        (line(language=3), "'language' must be a non-empty string or null, got 3"),
        (line(colour="red"), "unknown field 'colour'"),
        (line(data={"text": "a\x00b"}), "data contains a NUL character"),
        (line(intent="no\x00te"), "intent contains a NUL character"),
        (line(kind="fact"), "a fact's data must hold 'entity' and 'attribute' strings"),
        (
            line(kind="fact", data={"entity": "a", "attribute": "b", "value": 1}),
            "a fact's id must be fact_id(user_id, entity, attribute)",
        ),
        (b'{"kind": "fact_change", "user_id": "u"}', "missing 'entity'"),
        (
            orjson.dumps(
                {**orjson.loads(encode_change(fact("u", "a", "b", "c", T0)[1])), "value": 3}
            ),
            "'value' must be a string, got 3",
        ),
        (
            orjson.dumps(
                {**orjson.loads(encode_change(fact("u", "a", "b", "c", T0)[1])), "value": "c\x00"}
            ),
            "fact change value contains a NUL",
        ),
        (
            orjson.dumps(
                {**orjson.loads(encode_change(fact("u", "a", "b", "c", T0)[1])), "importance": 1}
            ),
            "unknown field 'importance'",
        ),
    ],
)
def test_a_bad_line_is_refused_with_the_reason(raw, why):
    with pytest.raises(BadLine) as refused:
        decode_line(raw)
    assert why in str(refused.value)


def test_an_escaped_backslash_before_u0000_is_text_not_a_nul():
    decoded = decode_line(line(data={"text": "\\u0000 is how JSON writes NUL"}))
    assert isinstance(decoded, Record) and decoded.data["text"].startswith("\\u0000")
