"""The gateway's Python API, as in-process callers (intent LLM, assistant) use it."""

from __future__ import annotations

import pytest

from nerve.errors import AllCandidatesFailed, RequestError
from nerve.gateway.app import GatewayState
from tests.conftest import make_config
from tests.fakes.upstream import Reply


@pytest.fixture
async def state(upstream):
    state = GatewayState(make_config({"primary": upstream}))
    await state.open()
    yield state
    await state.close()


async def test_ask_returns_the_answer_text_through_the_cascade(state, upstream):
    upstream.script(Reply(text="42"))
    answer = await state.gateway.ask([{"role": "user", "content": "meaning of life?"}])
    assert answer == "42"
    assert upstream.requests[-1].body["model"] == "m1"


async def test_ask_passes_extra_fields_such_as_response_format(state, upstream):
    fmt = {"type": "json_object"}
    await state.gateway.ask([{"role": "user", "content": "x"}], response_format=fmt)
    assert upstream.requests[-1].body["response_format"] == fmt


async def test_the_python_api_validates_like_http(state):
    with pytest.raises(RequestError) as info:
        await state.gateway.complete({"model": "auto", "messages": []})
    assert info.value.param == "messages"


async def test_the_python_api_fails_over_and_reports_like_http(state, upstream):
    upstream.script(Reply(status=503))
    with pytest.raises(AllCandidatesFailed, match="primary/m1"):
        await state.gateway.ask([{"role": "user", "content": "x"}])
