"""The JSON limits of a request body (issue 13.3, 13.11): nesting depth and numbers.

Too deep is refused at the edge (orjson reads 1,024 levels but writes only ~254, so such a body
used to fail with a 500 on its way to the upstream); an integer beyond 64 bits is refused
rather than silently rounded to a float. Both through /v1/chat/completions and /task, whose
body FastAPI parses with a different JSON reader.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nerve.errors import RequestError
from nerve.json_limits import MAX_DEPTH, check_depth, check_json
from tests.conftest import make_config
from tests.gateway.test_request_http import MSG, post, refused

CHAT = {"model": "default", "messages": MSG}


@pytest.fixture
def server(serve, upstream):
    return serve(make_config({"primary": upstream}))


def nested(levels: int) -> Any:
    """`levels` arrays inside each other: [[[...]]]."""
    value: Any = []
    for _ in range(levels - 1):
        value = [value]
    return value


def deep_body(depth: int) -> bytes:
    """A chat body `depth` containers deep in all, counting the body itself (built as text:
    the stdlib encoder would hit Python's recursion limit first)."""
    inner = depth - 1
    head = json.dumps(CHAT)[:-1]
    return f'{head}, "extra": {"[" * inner}{"]" * inner}}}'.encode()


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 253, 254, 255, 300, 1024])
def test_a_body_nested_past_the_limit_is_a_400_too_deep_naming_the_field(server, upstream, depth):
    error = refused(post(server, deep_body(depth)), "extra")
    assert error["code"] == "too_deep" and str(MAX_DEPTH) in error["message"]
    assert upstream.requests == []


def test_a_body_deeper_than_the_parser_reads_is_too_deep_too(server, upstream):
    error = refused(post(server, deep_body(5000)), None)
    assert error["code"] == "too_deep"
    assert upstream.requests == []


def test_a_body_at_the_limit_reaches_the_upstream_unchanged(server, upstream):
    r = post(server, deep_body(MAX_DEPTH))
    assert r.status_code == 200, r.text
    assert upstream.requests[-1].body["extra"] == nested(MAX_DEPTH - 1)


def test_task_refuses_a_body_nested_past_the_limit(server, upstream):
    body = {"route": "default", "messages": MSG, "extra": nested(300)}
    raw = json.dumps(body).encode()
    error = refused(post(server, raw, "/task"), "extra")
    assert error["code"] == "too_deep"
    assert upstream.requests == []


@pytest.mark.parametrize(
    ("fields", "param"),
    [
        ({"seed": 2**64}, "seed"),
        ({"seed": -(2**63) - 1}, "seed"),
        ({"seed": 123456789012345678901234567890}, "seed"),
        ({"metadata": {"ids": [1, 2, 10**40]}}, "metadata.ids[2]"),
    ],
)
def test_an_integer_beyond_64_bits_is_refused_not_rounded(server, upstream, fields, param):
    """orjson reads such an integer as a float: forwarded, it would be another number."""
    error = refused(post(server, {**CHAT, **fields}), param)
    assert error["code"] == "number_out_of_range"
    assert upstream.requests == []


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/task"])
def test_64_bit_integers_reach_the_upstream_digit_for_digit(server, upstream, path):
    body = {**CHAT, "route": "default", "seed": 2**64 - 1, "logit_bias": {"50256": -(2**63)}}
    if path == "/task":
        del body["model"]
    else:
        del body["route"]
    r = post(server, body, path)
    assert r.status_code == 200, r.text
    raw = upstream.requests[-1].raw
    assert b"18446744073709551615" in raw and b"-9223372036854775808" in raw


def test_long_digit_runs_inside_strings_are_text_not_numbers(server, upstream):
    content = "order 123456789012345678901234567890, ref 0.12345678901234567890123"
    r = post(server, {"model": "default", "messages": [{"role": "user", "content": content}]})
    assert r.status_code == 200, r.text
    assert upstream.requests[-1].body["messages"][0]["content"] == content


def test_task_refuses_an_integer_beyond_64_bits(server, upstream):
    """FastAPI's reader keeps big integers exact; the encoder to the upstream cannot write them."""
    body = {"route": "default", "messages": MSG, "seed": 2**64}
    error = refused(post(server, body, "/task"), "seed")
    assert error["code"] == "number_out_of_range"
    assert upstream.requests == []


# --- the functions other JSON routes can use -------------------------------------------------


def test_check_depth_counts_containers_and_names_the_top_level_field():
    check_depth({"a": nested(3)}, 4)
    check_depth("scalar", 0)
    with pytest.raises(RequestError) as caught:
        check_depth({"ok": 1, "a": {"b": nested(3)}}, 4)
    assert (caught.value.code, caught.value.param) == ("too_deep", "a")


def test_check_depth_walks_without_recursion():
    """Deeper than Python's recursion limit: an iterative walk still answers."""
    with pytest.raises(RequestError):
        check_depth(nested(100_000), MAX_DEPTH)


@pytest.mark.parametrize(
    ("value", "param"),
    [({"t": float("inf")}, "t"), ({"t": [float("nan")]}, "t[0]"), ([2**70], "[0]")],
)
def test_check_json_refuses_numbers_the_encoder_would_change(value, param):
    """Another parser (the stdlib's, behind FastAPI) reads NaN, Infinity and huge integers."""
    with pytest.raises(RequestError) as caught:
        check_json(value)
    assert (caught.value.code, caught.value.param) == ("number_out_of_range", param)


def test_task_refuses_nan_rather_than_sending_null(server, upstream):
    """The stdlib reads NaN; orjson would write it as null, another value than the client's."""
    raw = b'{"route": "default", "messages": [{"role": "user", "content": "hi"}], "top_k": NaN}'
    error = refused(post(server, raw, "/task"), "top_k")
    assert error["code"] == "number_out_of_range"
    assert upstream.requests == []


def depth_of(value: Any) -> int:
    """The reference: containers nested, recursively."""
    if isinstance(value, dict):
        return 1 + max(map(depth_of, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth_of, value), default=0)
    return 0


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.sampled_from([2**64, -(2**63) - 1, 2**63])
    | st.floats() | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner,
                                                                max_size=3),
    max_leaves=30,
)  # fmt: skip


def out_of_range(value: Any) -> bool:
    if isinstance(value, dict):
        return any(map(out_of_range, value.values()))
    if isinstance(value, list):
        return any(map(out_of_range, value))
    if type(value) is int:
        return not -(2**63) <= value <= 2**64 - 1
    return isinstance(value, float) and not math.isfinite(value)


@settings(max_examples=300, derandomize=True, database=None)
@given(json_values, st.integers(0, 8))
def test_check_json_refuses_exactly_what_breaks_a_limit(value, limit):
    """The level-by-level scan on the hot path and the exact walk agree with the reference."""
    too_deep, bad = depth_of(value) > limit, out_of_range(value)
    try:
        check_json(value, limit)
    except RequestError as e:
        assert too_deep if e.code == "too_deep" else bad and e.code == "number_out_of_range"
    else:
        assert not too_deep and not bad
    try:
        check_depth(value, limit)
    except RequestError:
        assert too_deep
    else:
        assert not too_deep
