"""Fallback chains, missing keys, timeouts, 429 cooldowns and circuit breakers, over HTTP."""

from __future__ import annotations

import logging
import socket
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from nerve.config import parse_config
from tests.conftest import make_config
from tests.fakes.upstream import Reply

MSG = [{"role": "user", "content": "hello"}]
CHAIN = [
    {
        "name": "default",
        "model": {"provider": "primary", "model": "m1"},
        "fallbacks": [{"provider": "secondary", "model": "m2"}],
    }
]


def chat(server, **body):
    return httpx.post(
        f"{server.url}/v1/chat/completions",
        json={"model": "auto", "messages": MSG, **body},
        timeout=10,
    )


@pytest.fixture
def pair(serve, upstream, upstream2):
    return serve(make_config({"primary": upstream, "secondary": upstream2}, routes=CHAIN))


@pytest.mark.parametrize("status", [500, 502, 503, 429, 401])
def test_a_failing_model_falls_back_to_the_next_in_the_chain(pair, upstream, upstream2, status):
    """GW-6: 5xx, 429 and a bad key move on to the next candidate; a header says so."""
    upstream.script(Reply(status=status))
    upstream2.script(Reply(text="from secondary"))
    r = chat(pair)
    assert r.status_code == 200
    assert r.json()["choices"][0]["message"]["content"] == "from secondary"
    assert r.headers["x-nerve-fallback"] == "true"
    assert r.headers["x-nerve-provider"] == "secondary"
    assert httpx.get(f"{pair.url}/stats").json()["fallbacks"] == 1


def test_a_streamed_request_failing_before_its_first_byte_falls_back(pair, upstream, upstream2):
    """GW-9: before anything reached the client, a stream fails over like a plain request."""
    upstream.script(Reply(status=503))
    upstream2.script(Reply(chunks=["ok"]))
    with httpx.stream(
        "POST",
        f"{pair.url}/v1/chat/completions",
        timeout=10,
        json={"model": "auto", "stream": True, "messages": MSG},
    ) as r:
        text = r.read().decode()
        assert r.headers["x-nerve-provider"] == "secondary"
    assert '"ok"' in text and text.rstrip().endswith("[DONE]")


def test_a_provider_without_a_key_is_skipped_with_a_warning(serve, upstream, upstream2, caplog):
    """GW-6: ${VAR} unset → no key → skipped without a call, logged as a warning."""
    config = parse_config(
        {
            "providers": [
                {
                    "name": "primary",
                    "base_url": upstream.openai_base_url,
                    "api_key": "${NO_SUCH_KEY}",
                },
                {"name": "secondary", "base_url": upstream2.openai_base_url, "api_key": "sk-2"},
            ],
            "routes": CHAIN,
        },
        environ={},
    )
    with caplog.at_level(logging.WARNING, logger="nerve.gateway"):
        server = serve(config)
        r = chat(server)
    assert r.status_code == 200 and r.headers["x-nerve-provider"] == "secondary"
    assert upstream.requests == []
    assert any("primary has no API key" in rec.getMessage() for rec in caplog.records)


def test_a_timeout_moves_to_the_next_candidate(serve, upstream, upstream2):
    """GW-6: an upstream that never answers is abandoned after timeout_seconds."""
    config = parse_config(
        {
            "providers": [
                {
                    "name": "primary",
                    "base_url": upstream.openai_base_url,
                    "api_key": "k",
                    "timeout_seconds": 0.3,
                },
                {"name": "secondary", "base_url": upstream2.openai_base_url, "api_key": "k"},
            ],
            "routes": CHAIN,
        },
        environ={},
    )
    upstream.script(Reply(hang=True))
    r = chat(serve(config))
    assert r.status_code == 200 and r.headers["x-nerve-provider"] == "secondary"


def test_an_unreachable_provider_moves_to_the_next_candidate(serve, upstream2):
    """GW-6: connection refused is a failure like any other."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead_port = s.getsockname()[1]  # closed when the block ends: nothing listens there
    config = parse_config(
        {
            "providers": [
                {"name": "primary", "base_url": f"http://127.0.0.1:{dead_port}/v1", "api_key": "k"},
                {"name": "secondary", "base_url": upstream2.openai_base_url, "api_key": "k"},
            ],
            "routes": CHAIN,
        },
        environ={},
    )
    r = chat(serve(config))
    assert r.status_code == 200 and r.headers["x-nerve-provider"] == "secondary"


def test_when_every_candidate_fails_the_answer_is_502_naming_what_was_tried(
    pair, upstream, upstream2
):
    """GW-16: all backends down → 502 with an OpenAI-style error naming each attempt."""
    upstream.script(Reply(status=500))
    upstream2.script(Reply(status=503))
    r = chat(pair)
    assert r.status_code == 502
    error = r.json()["error"]
    assert error["type"] == "upstream_error"
    assert "primary/m1" in error["message"] and "secondary/m2" in error["message"]


def test_a_request_the_upstream_rejects_as_invalid_is_not_retried(pair, upstream, upstream2):
    """A 400 from the upstream is the request's fault: the client gets it, no fallback is tried."""
    upstream.script(Reply(status=400))
    r = chat(pair)
    assert r.status_code == 400
    assert upstream2.requests == []


@pytest.mark.parametrize("form", ["seconds", "http-date"])
def test_a_429_cools_the_model_down_for_retry_after(pair, upstream, upstream2, clock, form):
    """GW-8: Retry-After (both forms): the model is skipped without a call until then."""
    retry = (
        "120"
        if form == "seconds"
        else format_datetime(datetime.now(UTC) + timedelta(seconds=120), usegmt=True)
    )
    upstream.script(Reply(status=429, headers={"Retry-After": retry}))
    assert chat(pair).headers["x-nerve-provider"] == "secondary"
    assert len(upstream.requests) == 1
    assert chat(pair).headers["x-nerve-provider"] == "secondary"
    assert len(upstream.requests) == 1, "a cooling model was called"
    clock.advance(125)
    assert chat(pair).headers["x-nerve-provider"] == "primary"


def test_the_breaker_opens_after_three_failures_and_probes_once_after_the_wait(
    pair, upstream, upstream2, clock
):
    """GW-7: closed → open after 3 consecutive failures → half-open after 60 s → closed."""
    upstream.script(*[Reply(status=500)] * 3)
    for _ in range(3):
        assert chat(pair).headers["x-nerve-provider"] == "secondary"
    assert len(upstream.requests) == 3
    assert chat(pair).headers["x-nerve-provider"] == "secondary"
    assert len(upstream.requests) == 3, "an open breaker let a call through"
    breakers = httpx.get(f"{pair.url}/stats").json()["breakers"]
    assert breakers["primary/m1"]["state"] == "open"
    clock.advance(61)
    assert chat(pair).headers["x-nerve-provider"] == "primary"  # the probe succeeded
    assert httpx.get(f"{pair.url}/stats").json()["breakers"]["primary/m1"]["state"] == "closed"


def test_a_failed_probe_reopens_the_breaker(pair, upstream, upstream2, clock):
    """GW-7: half-open → open again when the single probe fails."""
    upstream.script(*[Reply(status=500)] * 4)
    for _ in range(3):
        chat(pair)
    clock.advance(61)
    assert chat(pair).headers["x-nerve-provider"] == "secondary"  # probe failed
    assert len(upstream.requests) == 4
    chat(pair)
    assert len(upstream.requests) == 4, "the breaker did not re-open after a failed probe"
