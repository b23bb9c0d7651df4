"""SPEC OB-1 over HTTP: one trace per request, continued from the client's traceparent, with a
CLIENT span per upstream attempt in the GenAI semantic conventions, exported over OTLP/HTTP."""

from __future__ import annotations

import anthropic
import openai
import pytest

from tests.fakes.upstream import FakeUpstream, Reply
from tests.telemetry.collector import Collector
from tests.telemetry.conftest import Traced

CHAT = "POST /v1/chat/completions"
HI = [{"role": "user", "content": "hi"}]


def sdk(url: str, traceparent: str | None = None) -> openai.OpenAI:
    headers = {"traceparent": traceparent} if traceparent else None
    return openai.OpenAI(base_url=f"{url}/v1", api_key="k", max_retries=0, default_headers=headers)


def test_a_completion_is_one_trace_continuing_the_clients_traceparent(
    traced: Traced, otlp: Collector, upstream: FakeUpstream, client_traceparent
) -> None:
    header, trace_id, client_span = client_traceparent
    upstream.script(Reply(text="namaste", usage={"prompt_tokens": 21, "completion_tokens": 4,
                                                 "total_tokens": 25}))  # fmt: skip
    server = traced({"primary": upstream}, service_name="nerve-test")
    with sdk(server.url, header) as client:
        client.chat.completions.create(model="auto", messages=HI, temperature=0.2, max_tokens=9)
    server.stop()

    http, call = otlp.one(CHAT), otlp.one("chat m1")
    assert {s.trace_id for s in otlp.spans} == {trace_id}  # one trace: the client's
    assert http.kind == "server" and http.parent_id == client_span
    assert http.attributes["http.request.method"] == "POST"
    assert http.attributes["url.path"] == "/v1/chat/completions"
    assert http.attributes["http.response.status_code"] == 200
    assert (
        http.attributes["nerve.route"] == "default" and http.attributes["nerve.fallback"] is False
    )
    assert http.resource["service.name"] == "nerve-test"

    assert call.kind == "client" and call.parent_id == http.span_id and not call.error
    assert call.attributes | {"server.port": 0} == call.attributes | {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "m1", "gen_ai.response.model": "m1",
        "gen_ai.response.id": "chatcmpl-fake1", "gen_ai.response.finish_reasons": ["stop"],
        "gen_ai.usage.input_tokens": 21, "gen_ai.usage.output_tokens": 4,
        "gen_ai.request.temperature": 0.2, "gen_ai.request.max_tokens": 9,
        "server.address": "127.0.0.1", "server.port": 0, "nerve.provider": "primary",
        "nerve.route": "default", "nerve.router.layer": "default", "nerve.fallback": False,
        "nerve.cost_usd": 0.0,
    }  # fmt: skip
    assert http.start_ns <= call.start_ns <= call.end_ns <= http.end_ns

    # The upstream was asked within the same trace, as a child of the attempt's span.
    sent = upstream.requests[-1].headers["traceparent"]
    assert sent == f"00-{trace_id}-{call.span_id}-01"


def test_a_fallback_is_two_attempt_spans_the_first_failed(
    traced: Traced, otlp: Collector, upstream: FakeUpstream, upstream2: FakeUpstream,
    client_traceparent,
) -> None:  # fmt: skip
    header, trace_id, _ = client_traceparent
    upstream.script(Reply(status=500))
    routes = [{"name": "default", "model": {"provider": "primary", "model": "m1"},
               "fallbacks": [{"provider": "secondary", "model": "m2"}]}]  # fmt: skip
    server = traced({"primary": upstream, "secondary": upstream2}, routes)
    with sdk(server.url, header) as client:
        raw = client.chat.completions.with_raw_response.create(model="default", messages=HI)
    assert raw.headers["x-nerve-fallback"] == "true"
    server.stop()

    failed, served, http = otlp.one("chat m1"), otlp.one("chat m2"), otlp.one(CHAT)
    assert failed.parent_id == served.parent_id == http.span_id
    assert failed.error and failed.attributes["error.type"] == "upstream_500"
    assert failed.attributes["nerve.fallback"] is False
    assert not served.error and served.attributes["nerve.fallback"] is True
    assert served.attributes["nerve.provider"] == "secondary"
    assert http.attributes["nerve.fallback"] is True and not http.error
    assert failed.end_ns <= served.start_ns
    # Each upstream was asked as a child of its own attempt.
    assert upstream.requests[-1].headers["traceparent"] == f"00-{trace_id}-{failed.span_id}-01"
    assert upstream2.requests[-1].headers["traceparent"] == f"00-{trace_id}-{served.span_id}-01"


def test_when_every_candidate_fails_the_server_span_is_an_error(
    traced: Traced, otlp: Collector, upstream: FakeUpstream
) -> None:
    upstream.script(Reply(status=503), Reply(status=503))
    server = traced({"primary": upstream})
    with sdk(server.url) as client, pytest.raises(openai.APIStatusError) as failed:
        client.chat.completions.create(model="auto", messages=HI)
    status = failed.value.status_code
    server.stop()
    http, call = otlp.one(CHAT), otlp.one("chat m1")
    assert http.attributes["http.response.status_code"] == status >= 500
    assert http.error and http.attributes["error.type"] == str(status)
    assert call.error and call.attributes["error.type"] == "upstream_503"
    assert http.parent_id == ""  # no traceparent from the client: a new trace


def test_a_stream_records_its_time_to_first_chunk_and_its_usage(
    traced: Traced, otlp: Collector, upstream: FakeUpstream
) -> None:
    upstream.script(Reply(chunks=["one ", "two ", "three"], usage={
        "prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}))  # fmt: skip
    server = traced({"primary": upstream})
    with sdk(server.url) as client:
        stream = client.chat.completions.create(model="auto", messages=HI, stream=True)
        text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert text == "one two three"
    server.stop()

    call = otlp.one("chat m1")
    assert "first_chunk" in call.events
    assert 0 < call.attributes["nerve.ttft_ms"] <= (call.end_ns - call.start_ns) / 1e6
    assert call.attributes["gen_ai.usage.input_tokens"] == 5
    assert call.attributes["gen_ai.usage.output_tokens"] == 3
    assert call.attributes["gen_ai.response.finish_reasons"] == ["stop"]
    assert call.attributes["gen_ai.response.model"] == "m1"
    assert call.parent_id == otlp.one(CHAT).span_id and not call.error


def test_messages_and_embeddings_name_their_operation_and_provider(
    traced: Traced, otlp: Collector, upstream: FakeUpstream
) -> None:
    routes = [{"name": "default", "model": {"provider": "anthropic", "model": "claude-x"}},
              {"name": "vectors", "model": {"provider": "primary", "model": "e1"}}]  # fmt: skip
    server = traced({"anthropic": upstream, "primary": upstream}, routes)
    with anthropic.Anthropic(base_url=server.url, api_key="k", max_retries=0) as claude:
        claude.messages.create(model="default", max_tokens=20, messages=HI)
    with sdk(server.url) as client:
        client.embeddings.create(model="vectors", input="hello")
    server.stop()

    message, vectors = otlp.one("chat claude-x"), otlp.one("embeddings e1")
    assert otlp.one("POST /v1/messages").span_id == message.parent_id
    assert message.attributes["gen_ai.provider.name"] == "anthropic"
    assert message.attributes["gen_ai.response.finish_reasons"] == ["end_turn"]
    assert message.attributes["gen_ai.request.max_tokens"] == 20
    assert vectors.attributes["gen_ai.operation.name"] == "embeddings"
    assert otlp.one("POST /v1/embeddings").span_id == vectors.parent_id
