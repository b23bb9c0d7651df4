"""POST /v1/embeddings and /v1/completions through nerve, with the real OpenAI SDK as the client:
routed by model, failed over, refused where no candidate serves them, counted in /stats."""

from __future__ import annotations

import httpx
import openai
import pytest

from tests.conftest import make_config
from tests.fakes.upstream import Reply

EMBED_ROUTES = [
    {"name": "default", "model": {"provider": "primary", "model": "m1"}},
    {"name": "embed", "model": {"provider": "primary", "model": "text-embedding-3-small"},
     "fallbacks": [{"provider": "backup", "model": "text-embedding-3-small"}]},
    {"name": "claude-only", "model": {"provider": "anthropic", "model": "claude-x"}},
    {"name": "mixed", "model": {"provider": "anthropic", "model": "claude-x"},
     "fallbacks": [{"provider": "backup", "model": "gpt-3.5-turbo-instruct"}]},
]  # fmt: skip


@pytest.fixture
def server(serve, upstream, upstream2):
    upstreams = {"primary": upstream, "backup": upstream2, "anthropic": upstream2}
    return serve(make_config(upstreams, routes=EMBED_ROUTES))


@pytest.fixture
def client(server):
    with openai.OpenAI(base_url=f"{server.url}/v1", api_key="x", max_retries=0) as c:
        yield c


def test_embeddings_come_back_through_the_sdk_and_are_counted(client, server, upstream):
    """The body reaches the upstream's /embeddings with the target's model; vectors, usage and
    the routing headers come back; /stats counts the call and its tokens."""
    raw = client.embeddings.with_raw_response.create(
        model="embed", input=["namaste duniya", "hello"], dimensions=3
    )
    result = raw.parse()
    assert [d.embedding for d in result.data] == [[14.0, 0.0, 0.5], [5.0, 1.0, 0.5]]
    assert result.usage.prompt_tokens == 3
    assert raw.headers["x-nerve-route"] == "embed"
    assert raw.headers["x-nerve-model"] == "text-embedding-3-small"
    sent = upstream.requests[-1]
    assert sent.path == "/v1/embeddings"
    # as the SDK sent it (it asks for base64 itself), with the target's model
    assert sent.body == {"model": "text-embedding-3-small", "input": ["namaste duniya", "hello"],
                         "dimensions": 3, "encoding_format": "base64"}  # fmt: skip
    assert sent.headers["authorization"] == "Bearer sk-primary"
    stats = httpx.get(f"{server.url}/stats").json()
    assert stats["calls"] == 1 and stats["tokens"]["prompt"] == 3
    assert stats["by_route"]["embed"]["calls"] == 1


def test_embeddings_fail_over_to_the_next_candidate(client, upstream, upstream2):
    upstream.script(Reply(status=500))
    raw = client.embeddings.with_raw_response.create(model="embed", input="x")
    assert raw.headers["x-nerve-fallback"] == "true"
    assert raw.headers["x-nerve-provider"] == "backup"
    assert upstream2.requests[-1].path == "/v1/embeddings"


def test_a_route_with_no_model_that_embeds_is_a_400_naming_it(client, server, upstream2):
    with pytest.raises(openai.BadRequestError) as caught:
        client.embeddings.create(model="claude-only", input="x")
    error = caught.value.body
    assert error["code"] == "model_not_supported" and error["param"] == "model"
    assert "claude-only" in error["message"] and "embeddings" in error["message"]
    assert upstream2.requests == []  # nothing was sent anywhere


def test_candidates_that_cannot_serve_are_dropped_not_failed(client, server, upstream2):
    """An Anthropic candidate is skipped for completions; the openai one answers, and it is
    not a fallback (it is the plan's first callable candidate)."""
    raw = client.completions.with_raw_response.create(model="mixed", prompt="def add(a, b):")
    assert raw.parse().choices[0].text == "Hello from fake"
    assert raw.headers["x-nerve-provider"] == "backup"
    assert [r.path for r in upstream2.requests] == ["/v1/completions"]
    breakers = httpx.get(f"{server.url}/stats").json()["breakers"]
    assert all(b["consecutive_failures"] == 0 for b in breakers.values())


def test_completions_carry_the_suffix_for_fill_in_the_middle(client, upstream):
    result = client.completions.create(model="primary/code-fim", prompt="def add(a, b):\n    ",
                                       suffix="\n\nprint(add(1, 2))", max_tokens=20)  # fmt: skip
    assert result.choices[0].text == "Hello from fake<suffix:\n\nprint(add(1, 2))>"
    sent = upstream.requests[-1]
    assert sent.path == "/v1/completions" and sent.body["model"] == "code-fim"
    assert sent.body["suffix"] == "\n\nprint(add(1, 2))" and sent.body["max_tokens"] == 20


def test_a_completions_stream_is_forwarded_and_its_usage_counted(client, server, upstream):
    usage = {"prompt_tokens": 6, "completion_tokens": 3, "total_tokens": 9}
    upstream.script(Reply(chunks=["ret", "urn a", " + b"], usage=usage))
    chunks = list(client.completions.create(model="default", prompt="def add(a, b):", stream=True))
    assert "".join(c.choices[0].text for c in chunks if c.choices) == "return a + b"
    assert upstream.requests[-1].body["stream_options"] == {"include_usage": True}
    stats = httpx.get(f"{server.url}/stats").json()
    assert stats["tokens"]["prompt"] == 6 and stats["tokens"]["completion"] == 3


@pytest.mark.parametrize(
    ("path", "body", "param"),
    [
        ("/v1/embeddings", {"model": "embed"}, "input"),
        ("/v1/embeddings", {"model": "embed", "input": [1, "a"]}, "input"),
        ("/v1/embeddings", {"model": "auto", "input": "a"}, "model"),
        ("/v1/embeddings", {"model": "embed", "input": "a", "dimensions": 0}, "dimensions"),
        ("/v1/completions", {"model": "default"}, "prompt"),
        ("/v1/completions", {"model": "default", "prompt": "a", "suffix": 3}, "suffix"),
        ("/v1/completions", {"prompt": "a"}, "model"),
    ],
)
def test_bad_bodies_are_400s_naming_the_field_and_reach_no_upstream(server, upstream, path,
                                                                      body, param):  # fmt: skip
    r = httpx.post(server.url + path, json=body)
    assert r.status_code == 400, r.text
    assert r.json()["error"]["param"] == param
    assert upstream.requests == []
