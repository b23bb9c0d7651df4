"""GW-16: whatever body is POSTed to the chat endpoints, the answer is a 200 or a 4xx in the
OpenAI error shape naming the field at fault, never a 5xx, and the server goes on serving.

Generated bodies, against a real server with the fake upstream (an OpenAI and an Anthropic
provider): chat requests with every known field of the right type or of any JSON type, roles and
content parts of any shape, model names with control characters and Unicode, integers beyond 64
bits, nesting up to past orjson's limit, and raw bytes (truncated JSON, garbage, a BOM, NaN).

To fuzz another OpenAI-shaped endpoint, add an `Endpoint` to ENDPOINTS: its path, a strategy of
raw bodies (`as_bytes` turns one of dicts into wire bodies, broken ones included), how many
examples it gets, and a `check` of each answer. /v1/messages and /v1/responses have their own
body strategies in test_agent_bodies.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nerve.config import Config
from tests.conftest import RunningServer, make_config
from tests.fakes.upstream import FakeUpstream

ROLES = ["system", "developer", "user", "assistant", "tool", "function"]
MODELS = ["auto", "default", "primary/m1", "anthropic/claude-fuzz", "primary/", "nobody/m"]
BIG = [2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63), -(2**63) - 1, 10**30, -(10**40)]
REQUIRED = ("model", "messages", "route")
OPENAI_TYPES = frozenset({"invalid_request_error", "not_found_error", "authentication_error",
                          "permission_error", "rate_limit_error"})  # fmt: skip
CONTROL = ["\r", "\n", "\r\nx-injected: 1", "\x00", "\x1b", "\x7f", "\x85", "\u2028", "\u202e"]

# --- JSON values of any type -----------------------------------------------------------------

text = st.text(max_size=12)  # any code point but surrogates: control characters included
numbers = st.integers() | st.sampled_from(BIG) | st.floats(allow_nan=False, allow_infinity=False)
scalars = st.none() | st.booleans() | numbers | text
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)


# --- chat request bodies: right-shaped, one field off, any field off, anything -------------

URLS = ["https://example.com/a.png", "data:image/png;base64,iVBORw0K", "data:,x", "ftp://x"]
good_part = st.fixed_dictionaries({"type": st.just("text"), "text": text}) | st.fixed_dictionaries(
    {
        "type": st.just("image_url"),
        "image_url": st.fixed_dictionaries({"url": st.sampled_from(URLS)}),
    }
)
good_content = st.none() | text | st.lists(good_part, max_size=2)
good_function = st.fixed_dictionaries(
    {"name": text}, optional={"arguments": st.sampled_from(['{"city": "Pune"}', "{}", "", "[1]"])}
)
good_call = st.fixed_dictionaries(
    {"id": text, "type": st.just("function"), "function": good_function}
)
good_message = st.one_of(
    st.fixed_dictionaries({"role": st.sampled_from(["system", "developer", "user"]),
                           "content": good_content}, optional={"name": text}),
    st.fixed_dictionaries({"role": st.just("assistant"), "content": good_content},
                          optional={"tool_calls": st.lists(good_call, max_size=2)}),
    st.fixed_dictionaries({"role": st.just("tool"), "content": text, "tool_call_id": text}),
)  # fmt: skip
GOOD: dict[str, st.SearchStrategy[Any]] = {
    "stream": st.booleans(),
    "stream_options": st.fixed_dictionaries({}, optional={"include_usage": st.booleans()}),
    "max_tokens": st.integers(1, 5000),
    "max_completion_tokens": st.integers(1, 5000),
    "n": st.integers(1, 2),
    "user": text,
    "stop": text | st.lists(text, max_size=3),
    "tools": st.lists(st.fixed_dictionaries({"type": st.just("function"),
                                             "function": good_function}), max_size=2),
    "tool_choice": st.sampled_from(["auto", "none", "required"]) | st.fixed_dictionaries(
        {"type": st.just("function"), "function": st.fixed_dictionaries({"name": text})}),
    "parallel_tool_calls": st.booleans(),
    "temperature": st.floats(0, 2),
    "top_p": st.floats(0, 1),
    "seed": st.integers(-(2**63), 2**64 - 1),
    "response_format": values,
}  # fmt: skip
valid = st.fixed_dictionaries(
    {"model": st.sampled_from(MODELS[:4]), "messages": st.lists(good_message, min_size=1,
                                                                max_size=3)},
    optional=GOOD,
)  # fmt: skip
DROP = object()


def changed(body: dict[str, Any], field: str, value: object) -> dict[str, Any]:
    """`body` with one field set to `value`, or left out (DROP)."""
    rest = {k: v for k, v in body.items() if k != field}
    return rest if value is DROP else {**rest, field: value}


def weighted(*choices: tuple[int, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """`one_of` with weights (`a | a | b` is not: hypothesis draws distinct branches evenly)."""
    return st.sampled_from([s for n, s in choices for _ in range(n)]).flatmap(lambda s: s)


def either(good: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly the right shape, sometimes any JSON value at all."""
    return weighted((2, good), (1, values))


with_control = st.builds(
    lambda head, bad, tail: head + bad + tail,
    st.sampled_from(MODELS), st.sampled_from(CONTROL), text,
)  # fmt: skip
models = st.sampled_from(MODELS) | with_control | text | st.builds("primary/{}".format, text)
part = st.fixed_dictionaries(
    {"type": either(st.sampled_from(["text", "refusal", "image_url", "input_audio"]))},
    optional={"text": either(text), "refusal": either(text), "cache_control": values,
              "image_url": either(st.fixed_dictionaries({"url": either(st.sampled_from(URLS))}))},
)  # fmt: skip
function = st.fixed_dictionaries(
    {"name": either(text)}, optional={"arguments": either(text), "parameters": values}
)
tool_call = st.fixed_dictionaries(
    {"function": either(function)},
    optional={"id": either(text), "type": either(st.just("function"))},
)
message = st.fixed_dictionaries(
    {"role": either(st.sampled_from(ROLES))},
    optional={
        "content": either(st.none() | text | st.lists(either(part), max_size=3)),
        "tool_calls": either(st.lists(either(tool_call), max_size=2)),
        "tool_call_id": either(text),
        "name": either(text),
    },
)
ANY_FIELDS = {name: either(good) for name, good in GOOD.items()}
mixed = st.fixed_dictionaries(
    {"model": weighted((3, st.sampled_from(MODELS[:4])), (1, models), (1, values)),
     "messages": either(st.lists(either(message), min_size=1, max_size=3))},
    optional=ANY_FIELDS,
)  # fmt: skip
one_off = st.one_of(
    st.builds(
        changed, valid, st.sampled_from(["model", "messages", *GOOD]), values | st.just(DROP)
    ),
    st.builds(changed, valid, st.just("model"), models),
)
anything = st.fixed_dictionaries({}, optional={"model": values, "messages": values, **ANY_FIELDS})
chat = st.builds(lambda extra, body: {**extra, **body}, st.dictionaries(text, values, max_size=2),
                 weighted((2, valid), (1, one_off), (1, mixed), (1, anything)))  # fmt: skip


def encoded(body: Any, ascii_only: bool) -> bytes:
    return json.dumps(body, ensure_ascii=ascii_only).encode()


def deepened(body: dict[str, Any], field: str, depth: int, bracket: str) -> bytes:
    """`body` with `field` set to `depth` arrays or objects nested inside each other (spliced
    in as text: the stdlib encoder would stop at Python's recursion limit)."""
    nested = "[" * depth + "]" * depth if bracket == "[" else '{"a":' * depth + "1" + "}" * depth
    return encoded({**body, field: "\x00deep"}, True).replace(b'"\\u0000deep"', nested.encode())


def as_bytes(bodies: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[bytes]:
    """Bodies as the wire carries them: JSON three times in four, else broken in some way."""
    json_bytes = st.builds(encoded, bodies, st.booleans())
    broken = st.one_of(
        st.builds(
            deepened,
            bodies,
            st.sampled_from(["extra", "messages", "tools", "user"]),
            st.integers(1, 1100) | st.sampled_from([127, 128, 129, 254, 255, 1024, 1025]),
            st.sampled_from("[{"),
        ),
        st.builds(lambda raw, cut: raw[:cut], json_bytes, st.integers(0, 80)),  # truncated
        st.builds(lambda raw: b"\xef\xbb\xbf" + raw, json_bytes),  # a byte-order mark
        json_bytes.map(lambda raw: raw.replace(b"}", b', "temperature": NaN}', 1)),
        json_bytes.map(lambda raw: raw.replace(b'"', b'"\xff', 1)),  # not UTF-8
        values.map(lambda v: encoded(v, True)),  # not an object
        st.binary(max_size=40),
    )
    return weighted((3, json_bytes), (1, broken))


def task_body(body: dict[str, Any]) -> dict[str, Any]:
    """A chat body as /task takes it: `route` instead of `model`."""
    out = {k: v for k, v in body.items() if k != "model"}
    return {**out, "route": body["model"]} if "model" in body else out


# --- what every answer must be ---------------------------------------------------------------


def field_named(param: Any, body: dict[str, Any]) -> bool:
    """Whether `param` names a field of `body` (messages[0].role, messages.0.role, seed...) or
    a required one it lacks."""
    if not isinstance(param, str):
        return False
    roots = [*body, *REQUIRED]
    return any(param == k or param.startswith((f"{k}.", f"{k}[")) for k in roots)


def check_answer(raw: bytes, r: httpx.Response, types: frozenset[str] = OPENAI_TYPES) -> None:
    """A 200, or a 4xx shaped as OpenAI errors are; a 400 of ours names the field at fault."""
    assert r.status_code in (200, 400, 404), (raw[:300], r.status_code, r.text[:500])
    for name, value in r.headers.items():
        if name.startswith("x-nerve-"):
            assert value.isascii() and value.isprintable(), (name, value)
    if r.status_code == 200:
        if r.headers["content-type"].startswith("text/event-stream"):
            assert r.text.endswith("data: [DONE]\n\n"), r.text[-300:]
        else:
            assert isinstance(r.json(), dict), r.text[:300]
        return
    error = r.json()["error"]
    assert isinstance(error["message"], str) and error["message"], error
    assert error["type"] in types and "code" in error, error
    try:
        body = json.loads(raw)
    except ValueError:
        body = None
    unnamed = error["code"] in ("invalid_json", "too_deep") or not isinstance(body, dict)
    if error["type"] == "invalid_request_error" and not unnamed:
        assert field_named(error.get("param"), body), (raw[:300], error)


@dataclass(frozen=True)
class Endpoint:
    path: str
    bodies: st.SearchStrategy[bytes]
    max_examples: int
    check: Callable[[bytes, httpx.Response], None] = check_answer


ENDPOINTS = [
    Endpoint("/v1/chat/completions", as_bytes(chat), max_examples=800),
    Endpoint("/task", as_bytes(chat.map(task_body)), max_examples=200),
]


@pytest.fixture
def server(
    serve: Callable[[Config], RunningServer], upstream: FakeUpstream, upstream2: FakeUpstream
) -> RunningServer:
    routes = [{"name": "default", "model": {"provider": "primary", "model": "m1"},
               "fallbacks": [{"provider": "anthropic", "model": "claude-fuzz"}]}]  # fmt: skip
    rate = {"window_requests": 100_000, "burst": 100_000, "refill_per_second": 1000}
    return serve(make_config({"primary": upstream, "anthropic": upstream2}, routes=routes,
                             limits={"rate": rate}))  # fmt: skip


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=lambda e: e.path)
def test_any_body_gets_a_200_or_a_4xx_naming_the_field_and_the_server_keeps_serving(
    server: RunningServer, endpoint: Endpoint, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR)
    headers = {"content-type": "application/json"}
    with httpx.Client(base_url=server.url, headers=headers, timeout=10) as http:

        @settings(max_examples=endpoint.max_examples, derandomize=True, deadline=None,
                  database=None, suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
        @given(endpoint.bodies)
        def post(raw: bytes) -> None:
            endpoint.check(raw, http.post(endpoint.path, content=raw))

        post()
        health = http.get("/health").json()
        chat = {"model": "default", "messages": [{"role": "user", "content": "still there?"}]}
        assert http.post("/v1/chat/completions", json=chat).status_code == 200

    assert health["status"] == "ok" and health["breakers_not_closed"] == [], health
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
