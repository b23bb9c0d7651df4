"""SPEC PR-3, PR-5: route_model explains the gateway's choice without calling a model; reason
asks the reasoning route (else the cascade) and counts the reasoning tokens."""

from __future__ import annotations

from typing import Any

import pytest

from nerve.config import Config
from nerve.server import NerveApp
from tests.conftest import make_config
from tests.fakes.upstream import FakeUpstream, Reply
from tests.mcp.conftest import ROUTES, Call, text_of

REASONING_USAGE: dict[str, Any] = {
    "prompt_tokens": 12,
    "completion_tokens": 50,
    "total_tokens": 62,
    "completion_tokens_details": {"reasoning_tokens": 42},
}


def _content(result: Any) -> dict[str, Any]:
    assert not result.is_error, text_of(result)
    out: dict[str, Any] = result.structured_content
    return out


async def test_route_model_names_the_rule_that_chose_the_route(
    call: Call, upstream: FakeUpstream
) -> None:
    out = _content(await call("route_model", text="why does my python script crash?"))
    assert (out["route"], out["provider"], out["model"]) == ("code", "primary", "code-model")
    assert out["layer"] == "rules" and out["score"] == 1.0
    assert out["reason"].startswith("rules: ")
    assert [(c["model"], c["status"]) for c in out["candidates"]] == [
        ("code-model", "ready"),
        ("code-fallback", "ready"),
    ]
    assert upstream.requests == []  # explaining calls no model


async def test_route_model_explains_a_semantic_match_and_the_default(call: Call) -> None:
    semantic = _content(await call(
        "route_model", messages=[{"role": "user", "content": "why does my function throw KeyError"}]
    ))  # fmt: skip
    assert (semantic["route"], semantic["layer"]) == ("code", "semantic")
    assert 0 < semantic["score"] <= 1
    fallback = _content(await call("route_model", text="tell me a story about rivers"))
    assert (fallback["route"], fallback["layer"], fallback["model"]) == ("default", "default", "m1")


async def test_route_model_for_a_named_route_says_it_was_named(call: Call) -> None:
    out = _content(await call("route_model", text="anything", model="code"))
    assert (out["route"], out["layer"], out["score"]) == ("code", "named", None)
    assert "named a route" in out["reason"]


async def test_route_model_skips_a_candidate_that_is_cooling_down(
    call: Call, nerve_app: NerveApp
) -> None:
    await nerve_app.gateway.cooldowns.cool("primary/code-model", 30)
    out = _content(await call("route_model", text="debug this traceback"))
    assert out["model"] == "code-fallback"
    assert out["candidates"][0]["status"] == "cooling_down"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "give either 'text' or 'messages'"),
        ({"text": "a", "messages": [{"role": "user", "content": "b"}]}, "give either"),
        ({"messages": [{"role": "robot", "content": "b"}]}, "'messages.0.role'"),
        ({"text": "a", "model": "nope/none"}, "unknown model 'nope/none'"),
    ],
)
async def test_route_model_bad_requests_are_errors_saying_why(
    call: Call, arguments: dict[str, Any], message: str
) -> None:
    result = await call("route_model", **arguments)
    assert result.is_error
    assert message in text_of(result)


async def test_reason_without_a_reasoning_route_uses_the_cascade_and_counts_tokens(
    call: Call, upstream: FakeUpstream, nerve_app: NerveApp
) -> None:
    upstream.script(Reply(text="42, because 6 x 7", usage=REASONING_USAGE))
    out = _content(await call("reason", prompt="what is 6 times 7?", system="be brief",
                              max_tokens=500, reasoning_effort="high"))  # fmt: skip
    assert out["answer"] == "42, because 6 x 7"
    assert (out["route"], out["provider"], out["model"]) == ("default", "primary", "m1")
    assert out["reasoning_tokens"] == 42
    assert out["usage"] == {
        "prompt_tokens": 12, "completion_tokens": 50, "reasoning_tokens": 42, "total_tokens": 62
    }  # fmt: skip
    [sent] = upstream.requests
    assert sent.body["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "what is 6 times 7?"},
    ]
    assert sent.body["max_completion_tokens"] == 500
    assert sent.body["reasoning_effort"] == "high"
    tokens = nerve_app.gateway.stats.snapshot()["tokens"]
    assert tokens["reasoning"] == 42  # counted in /stats like any other call


class TestReasoningRoute:
    @pytest.fixture
    def mcp_config(self, upstream: FakeUpstream) -> Config:
        thinking = {"name": "reasoning", "model": {"provider": "primary", "model": "thinker"}}
        return make_config({"primary": upstream}, [thinking, *ROUTES])

    async def test_reason_uses_the_route_named_reasoning(
        self, call: Call, upstream: FakeUpstream
    ) -> None:
        upstream.script(Reply(text="yes", usage=REASONING_USAGE,
                              extra={"reasoning_content": "check the premises"}))  # fmt: skip
        out = _content(await call("reason", prompt="is this sound?"))
        assert (out["route"], out["model"], out["answer"]) == ("reasoning", "thinker", "yes")
        assert out["reasoning"] == "check the premises"
        assert out["reasoning_tokens"] == 42
        assert upstream.requests[0].body["model"] == "thinker"


async def test_reason_when_every_candidate_fails_is_an_error_and_the_server_goes_on(
    call: Call, upstream: FakeUpstream
) -> None:
    upstream.script(Reply(status=503), Reply(status=503))
    result = await call("reason", prompt="hello")
    assert result.is_error
    assert text_of(result).startswith("reason: all candidates for route 'default' failed")
    assert not (await call("check_safety", kind="shell", content="ls")).is_error
