"""A model the client names that the provider does not have (`openai/gpt-4o-mnii`): the client's
mistake, so a 404 with the upstream's own message, on every endpoint — and it counts against
nothing: no breaker opens for everyone, no cooldown, no stats series per mistyped name. A route's
configured target that answers 404 is the operator's mistake and still falls back."""

from __future__ import annotations

import anthropic
import httpx
import openai
import pytest

from tests.conftest import make_config
from tests.fakes import anthropic_wire, openai_wire
from tests.fakes.upstream import Reply

MISSING = "The model `gpt-4o-mnii` does not exist or you do not have access to it."
ROUTES = [{"name": "default", "model": {"provider": "primary", "model": "gone"},
           "fallbacks": [{"provider": "primary", "model": "m1"}]}]  # fmt: skip


def not_found() -> Reply:
    return Reply(status=404, json=openai_wire.error_body(404, MISSING))


def untouched(stats):
    """Every breaker closed with no failures, and none made for a mistyped name."""
    breakers = stats["breakers"]
    assert all(b == {"state": "closed", "consecutive_failures": 0} for b in breakers.values())
    return not any("mnii" in key or "sonet" in key for key in breakers)


@pytest.fixture
def server(serve, upstream, upstream2):
    return serve(make_config({"primary": upstream, "anthropic": upstream2}, routes=ROUTES))


def test_a_mistyped_provider_model_is_a_404_with_the_upstreams_message(server, upstream):
    upstream.script(*[not_found()] * 6)
    with openai.OpenAI(base_url=f"{server.url}/v1", api_key="k", max_retries=0) as client:
        for _ in range(6):  # more than limits.breaker.failures (3)
            with pytest.raises(openai.NotFoundError) as caught:
                client.chat.completions.create(
                    model="primary/gpt-4o-mnii", messages=[{"role": "user", "content": "hi"}]
                )
            assert MISSING in caught.value.body["message"]
            assert caught.value.body["type"] == "not_found_error"

    stats = httpx.get(f"{server.url}/stats").json()
    assert untouched(stats) and stats["cooldowns"] == {}
    assert "primary/gpt-4o-mnii" not in stats["by_model"] and stats["errors"] == 0
    metrics = httpx.get(f"{server.url}/metrics").text
    assert "gpt-4o-mnii" not in metrics
    upstream.script(Reply(text="fine"))  # the provider's other models are served as ever
    body = {"model": "primary/m1", "messages": [{"role": "user", "content": "hi"}]}
    assert httpx.post(f"{server.url}/v1/chat/completions", json=body).status_code == 200


def test_a_mistyped_model_through_messages_passthrough_gets_anthropics_own_404(server, upstream2):
    error = anthropic_wire.error_body(404, "model: claude-sonet-4-5")
    upstream2.script(Reply(status=404, json=error))
    client = anthropic.Anthropic(base_url=server.url, api_key="k", max_retries=0)
    with client, pytest.raises(anthropic.NotFoundError) as caught:
        client.messages.create(model="anthropic/claude-sonet-4-5", max_tokens=16,
                               messages=[{"role": "user", "content": "hi"}])  # fmt: skip
    assert caught.value.body == error  # unmodified
    assert untouched(httpx.get(f"{server.url}/stats").json())


def test_a_stream_for_a_mistyped_model_is_a_404_before_any_frame(server, upstream):
    upstream.script(not_found())
    body = {"model": "primary/gpt-4o-mnii", "stream": True,
            "messages": [{"role": "user", "content": "hi"}]}  # fmt: skip
    r = httpx.post(f"{server.url}/v1/chat/completions", json=body)
    assert r.status_code == 404 and MISSING in r.json()["error"]["message"]


def test_a_routes_configured_target_that_answers_404_still_falls_back(server, upstream):
    upstream.script(not_found(), Reply(text="from the fallback"))
    body = {"model": "default", "messages": [{"role": "user", "content": "hi"}]}
    r = httpx.post(f"{server.url}/v1/chat/completions", json=body)
    assert r.status_code == 200 and r.headers["x-nerve-model"] == "m1"
    assert r.headers["x-nerve-fallback"] == "true"
