"""A request whose upstreams do not answer in time is a 504, not a 502 (issue 13.11).

504 Gateway Timeout says what happened: nerve, a gateway, got no timely answer. It is the
answer when every candidate that was called timed out (candidates skipped without a call do
not count); if any of them answered with an error instead, it is the 502 of GW-16.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from nerve.config import parse_config
from tests.fakes.upstream import FakeUpstream, Reply

MSG = [{"role": "user", "content": "hello"}]
SLOW = 0.2  # seconds: how long a provider waits here; the fake never answers


def config(primary: FakeUpstream, secondary: FakeUpstream, **second: Any) -> Any:
    def row(name: str, fake: FakeUpstream, **extra: Any) -> dict[str, Any]:
        return {"name": name, "base_url": fake.openai_base_url, "api_key": "k",
                "timeout_seconds": SLOW, **extra}  # fmt: skip

    route = {
        "name": "default",
        "model": {"provider": "primary", "model": "m1"},
        "fallbacks": [{"provider": "secondary", "model": "m2"}],
    }
    providers = [row("primary", primary), row("secondary", secondary, **second)]
    return parse_config({"providers": providers, "routes": [route]}, environ={})


def chat(server: Any, **body: Any) -> httpx.Response:
    return httpx.post(
        f"{server.url}/v1/chat/completions",
        json={"model": "default", "messages": MSG, **body},
        timeout=10,
    )


@pytest.mark.parametrize("stream", [False, True])
def test_when_every_candidate_times_out_the_answer_is_504(serve, upstream, upstream2, stream):
    upstream.script(Reply(hang=True))
    upstream2.script(Reply(hang=True))
    r = chat(serve(config(upstream, upstream2)), stream=stream)
    assert r.status_code == 504
    error = r.json()["error"]
    assert error["type"] == "upstream_error" and error["code"] == "all_failed"
    assert "primary/m1: primary: upstream timed out" in error["message"]
    assert "secondary/m2: secondary: upstream timed out" in error["message"]


def test_a_timeout_with_the_rest_skipped_is_still_504(serve, upstream, upstream2):
    """The secondary has no key: it is skipped, not called, so the one call made timed out."""
    upstream.script(Reply(hang=True))
    r = chat(serve(config(upstream, upstream2, api_key="")))
    assert r.status_code == 504 and "skipped: no API key" in r.json()["error"]["message"]
    assert upstream2.requests == []


def test_a_timeout_and_an_upstream_error_together_are_502(serve, upstream, upstream2):
    upstream.script(Reply(hang=True))
    upstream2.script(Reply(status=503))
    r = chat(serve(config(upstream, upstream2)))
    assert r.status_code == 502 and r.json()["error"]["code"] == "all_failed"
