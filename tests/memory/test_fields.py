"""The text rules of memory's input (memory/fields.py, issue 13): what the checks refuse is
exactly what the schema patterns refuse; `Memory` (the CLI's and the assistant's path) refuses
what no store can keep, a NUL, naming the field."""

from __future__ import annotations

import re
import sys
from collections.abc import AsyncIterator
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from nerve.errors import RequestError
from nerve.memory import Memory, MemoryStore
from nerve.memory.fields import (
    NAME_PATTERN,
    TEXT_PATTERN,
    TRIMMED_PATTERN,
    Data,
    UserId,
    check_data,
    data_problem,
    text_problem,
)

ALLOWED_CONTROLS = "\t\n\r"


def is_text(value: str) -> bool:
    """The rule, said plainly: no C0 control but tab, newline, CR; no lone surrogate."""
    return not any(
        (ord(c) < 0x20 and c not in ALLOWED_CONTROLS) or 0xD800 <= ord(c) <= 0xDFFF for c in value
    )


def test_every_code_point_is_judged_by_the_patterns_as_the_checks_judge_it() -> None:
    text, name, trimmed = (re.compile(p) for p in (TEXT_PATTERN, NAME_PATTERN, TRIMMED_PATTERN))
    for point in range(sys.maxunicode + 1):
        c = chr(point)
        if 0xD800 <= point <= 0xDFFF:  # not in the patterns (see fields.py): the checks refuse
            assert text_problem(c) is not None
            continue
        assert bool(text.fullmatch(c)) is is_text(c) is (text_problem(c) is None), hex(point)
        # Not blank means what str.strip() says: Memory strips user ids.
        expected = is_text(c) and bool(c.strip())
        assert bool(name.fullmatch(c)) is expected is (text_problem(c, blank=False) is None)
        assert bool(trimmed.fullmatch(c)) is expected, hex(point)


@settings(max_examples=300, derandomize=True)
@given(st.text(st.characters(codec="utf-8"), max_size=12))
def test_strings_are_judged_by_the_patterns_as_the_checks_judge_them(value: str) -> None:
    assert bool(re.fullmatch(TEXT_PATTERN, value)) is is_text(value)
    assert (text_problem(value) is None) is is_text(value)
    not_blank = is_text(value) and bool(value.strip())
    assert bool(re.fullmatch(NAME_PATTERN, value)) is not_blank
    assert (text_problem(value, blank=False) is None) is not_blank
    assert bool(re.fullmatch(TRIMMED_PATTERN, value)) is (not_blank and value == value.strip())


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                  max_size=3),
    max_leaves=12,
)  # fmt: skip


def all_text(value: Any) -> bool:
    if isinstance(value, str):
        return is_text(value)
    if isinstance(value, dict):
        return all(is_text(k) and all_text(v) for k, v in value.items())
    if isinstance(value, list):
        return all(all_text(v) for v in value)
    return True


class Body(BaseModel):
    data: Data


DATA_SCHEMA = jsonschema.Draft202012Validator(Body.model_json_schema())


@settings(max_examples=300, derandomize=True)
@given(st.dictionaries(st.text(max_size=4), json_values, max_size=4))
def test_data_is_judged_by_its_schema_as_its_check_judges_it(data: dict[str, Any]) -> None:
    clean = all_text(data)
    assert (data_problem(data) is None) is clean
    assert DATA_SCHEMA.is_valid({"data": data}) is clean


def test_a_control_character_in_data_is_named_by_its_path() -> None:
    assert data_problem({"a": [1, {"b": "x\x00"}]}) == (
        "data.a.1.b must not hold control characters (U+0000 at index 1); "
        "tab, newline and carriage return are allowed"
    )
    assert "a key of data ('k\\x1b')" in str(data_problem({"k\x1b": 1}))
    assert "lone surrogate" in str(data_problem({"a": "\ud800"}))
    # An escaped backslash before "u0000" is text, not a NUL.
    assert data_problem({"path": "C:\\u0000dir", "tab": "a\tb\r\n"}) is None
    with pytest.raises(RequestError) as refused:
        check_data({"task": "\x07"}, "payload")
    assert refused.value.param == "payload"


class Who(BaseModel):
    user_id: UserId


@pytest.mark.parametrize(
    ("user_id", "why"),
    [
        ("", "must not be blank"),
        (" \t\u3000", "must not be blank"),
        ("u\x00", "must not hold control characters (U+0000 at index 1)"),
        ("x" * 201, "String should have at most 200 characters"),
    ],
)
def test_a_user_id_must_be_text_and_not_blank(user_id: str, why: str) -> None:
    with pytest.raises(ValidationError) as refused:
        Who(user_id=user_id)
    assert why in str(refused.value)


@pytest.fixture
async def memory(store: MemoryStore) -> AsyncIterator[Memory]:
    mem = Memory(store)
    await mem.open()
    yield mem
    await mem.close()


@pytest.mark.parametrize(
    ("call", "param"),
    [
        (lambda m: m.store_memory("u", tier="episodic", intent="i", data={"k": "\x00"},
                                  importance=0.9), "data"),
        (lambda m: m.store_memory("u\x00", tier="episodic", intent="i", data={}, importance=0.9),
         "user_id"),
        (lambda m: m.store_memory("u", tier="semantic", intent="i\x00", data={}, importance=0.9),
         "intent"),
        (lambda m: m.store_memory("u", tier="semantic", intent="i", data={"k\x00": 1},
                                  importance=0.9), "data"),
        (lambda m: m.store_fact("u", "e\x00", "a", "v", 0.9), "entity"),
        (lambda m: m.store_fact("u", "e", "a", "v\x00", 0.9), "value"),
        (lambda m: m.record_event("u", "s", "outcome_task", {"task": "t\x00"}), "payload"),
        (lambda m: m.recall("u", intent="\x00"), "intent"),
        (lambda m: m.recall("\x00"), "user_id"),
        (lambda m: m.forget(["\x00"]), "id"),
    ],
)  # fmt: skip
async def test_memory_refuses_a_nul_on_every_backend_naming_the_field(
    memory: Memory, call: Any, param: str
) -> None:
    with pytest.raises(RequestError) as refused:
        await call(memory)
    assert refused.value.param == param
    assert await memory.recall("u") == []


async def test_other_control_characters_are_kept_by_memory_on_every_backend(
    memory: Memory,
) -> None:
    """Memory's own writers (the assistant's turns, tool events) carry tool output: an ANSI
    escape there must not fail a turn. REST and MCP refuse it (test_routes_text.py)."""
    data = {"text": "line one\n\tline two\r\n", "output": "\x1b[31mred\x1b[0m\x08"}
    stored = await memory.store_memory("u", tier="semantic", intent="note", data=data,
                                       importance=0.9)  # fmt: skip
    [found] = await memory.recall("u")
    assert found.record.id == stored.id and found.record.data == data
