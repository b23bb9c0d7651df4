"""SPEC OB-1: prompt and completion text leave only with `telemetry.capture_content: true`, and
`sample_ratio` decides which new traces are kept while a client's own decision is followed."""

from __future__ import annotations

import json

import openai
import pytest

from tests.fakes.upstream import FakeUpstream, Reply
from tests.telemetry.collector import Collector
from tests.telemetry.conftest import Traced

PROMPT = "my passport number is K1234567, book the flight"
ANSWER = "Booked flight AI-302 for the passport holder"
SYSTEM = "You are a travel agent."


def ask(url: str, *, stream: bool, headers: dict[str, str] | None = None) -> str:
    with openai.OpenAI(base_url=f"{url}/v1", api_key="k", max_retries=0,
                       default_headers=headers) as client:  # fmt: skip
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": PROMPT}]
        if not stream:
            answer = client.chat.completions.create(model="auto", messages=messages)
            return answer.choices[0].message.content or ""
        chunks = client.chat.completions.create(model="auto", messages=messages, stream=True)
        return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)


@pytest.mark.parametrize("capture", [False, True])
def test_prompt_and_completion_text_are_exported_only_with_capture_content(
    traced: Traced, otlp: Collector, upstream: FakeUpstream, capture: bool
) -> None:
    server = traced({"primary": upstream}, capture_content=capture)
    pieces = ["Booked flight ", "AI-302 ", "for the passport holder"]
    upstream.script(Reply(text=ANSWER), Reply(text=ANSWER, chunks=pieces))
    assert ask(server.url, stream=False) == ask(server.url, stream=True) == ANSWER
    server.stop()

    calls = otlp.named("chat m1")
    assert len(calls) == 2
    exported = json.dumps([s.attributes for s in otlp.spans] + [s.events for s in otlp.spans])
    if not capture:
        for text in ("K1234567", "AI-302", SYSTEM):
            assert text not in exported
        assert not any("gen_ai.input.messages" in s.attributes for s in calls)
        return
    for call in calls:  # the whole answer and the stream alike
        sent = json.loads(call.attributes["gen_ai.input.messages"])
        assert sent == [
            {"role": "system", "parts": [{"type": "text", "content": SYSTEM}]},
            {"role": "user", "parts": [{"type": "text", "content": PROMPT}]},
        ]
        (said,) = json.loads(call.attributes["gen_ai.output.messages"])
        assert said["role"] == "assistant"
        assert said["parts"] == [{"type": "text", "content": ANSWER}]


def test_sample_ratio_0_exports_nothing_of_its_own_but_follows_a_sampled_client(
    traced: Traced, otlp: Collector, upstream: FakeUpstream, client_traceparent
) -> None:
    header, trace_id, client_span = client_traceparent
    unsampled = header[:-2] + "00"
    server = traced({"primary": upstream}, sample_ratio=0.0)
    ask(server.url, stream=False)  # a new trace: the ratio says no
    fresh = upstream.requests[-1].headers["traceparent"]
    ask(server.url, stream=True, headers={"traceparent": unsampled})  # the client said no
    ask(server.url, stream=False, headers={"traceparent": header})  # the client said yes
    server.stop()

    # Only the client's sampled trace was exported: its server span and its attempt.
    assert {s.trace_id for s in otlp.spans} == {trace_id}
    assert sorted(s.name for s in otlp.spans) == ["POST /v1/chat/completions", "chat m1"]
    assert otlp.one("POST /v1/chat/completions").parent_id == client_span
    # Unsampled traces still propagate upstream, marked not sampled (flag bit 0 clear).
    assert fresh.startswith("00-") and not sampled(fresh) and trace_id not in fresh
    followed = upstream.requests[-2].headers["traceparent"]
    assert followed.startswith(f"00-{unsampled[3:35]}-") and not sampled(followed)
    assert sampled(upstream.requests[-1].headers["traceparent"])


def sampled(traceparent: str) -> bool:
    return bool(int(traceparent.rsplit("-", 1)[1], 16) & 1)  # W3C: bit 0 of the trace flags
