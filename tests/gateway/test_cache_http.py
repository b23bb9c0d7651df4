"""The exact-match response cache (SPEC OB-2) through the real OpenAI and Anthropic SDKs: a
repeated request is answered without an upstream call, with the same body or the same stream
events; another tenant, model or body is a miss; sampled requests, tool-call answers and what
`Cache-Control` forbids are not served or not kept. The fake upstream numbers its answers
(`chatcmpl-fake1`, `-fake2`...), so an answer's id says which upstream call made it."""

from __future__ import annotations

import json

import anthropic
import httpx
import openai
import pytest

from tests.conftest import make_config
from tests.fakes.upstream import Reply

URL = "/v1/chat/completions"
CACHE = {"ttl_seconds": 3600}
ROUTES = [
    {"name": "default", "model": {"provider": "primary", "model": "m1"}, "cache": CACHE},
    {"name": "claude", "model": {"provider": "anthropic", "model": "claude-up"}, "cache": CACHE},
    {"name": "translated", "model": {"provider": "primary", "model": "m3"}, "cache": CACHE},
    {"name": "guarded", "model": {"provider": "primary", "model": "m1"}, "cache": CACHE,
     "guard": {"tool_calls": "block"}},
    {"name": "plain", "model": {"provider": "primary", "model": "m1"}},
    {"name": "open", "model": {"provider": "primary", "model": "m1"}, "cache": CACHE,
     "guard": {"tool_calls": "off"}},
]  # fmt: skip
KEYS = [
    {"name": "a", "key": "key-a-0001"},
    {"name": "b", "key": "key-b-0001"},
    {"name": "hot", "key": "key-hot-0001", "cache": {"ttl_seconds": 60, "any_temperature": True}},
]
MSG = [{"role": "user", "content": "what is the capital of France?"}]


@pytest.fixture
def server(serve, upstream, upstream2):
    config = make_config(
        {"primary": upstream, "anthropic": upstream2}, ROUTES,
        server={"api_keys": KEYS}, probes={"interval_seconds": 0}, memory={"enabled": False},
    )  # fmt: skip
    return serve(config)


@pytest.fixture
def oai(server):
    with openai.OpenAI(base_url=f"{server.url}/v1", api_key="key-a-0001", max_retries=0) as c:
        yield c


def post(server, body: dict, key: str = "key-a-0001", **headers: str) -> httpx.Response:
    headers = {"authorization": f"Bearer {key}",
               **{k.replace("_", "-"): v for k, v in headers.items()}}  # fmt: skip
    return httpx.post(f"{server.url}{URL}", json=body, headers=headers, timeout=10)


def ask(model: str = "default", messages=MSG, **extra) -> dict:
    return {"model": model, "messages": messages, "temperature": 0, **extra}


def cache_stats(server) -> dict:
    r = httpx.get(f"{server.url}/stats", headers={"authorization": "Bearer key-a-0001"})
    return r.json()["cache"]


def test_a_repeated_request_is_answered_from_the_cache_without_an_upstream_call(oai, upstream):
    upstream.script(Reply(text="Paris", usage={"prompt_tokens": 12, "completion_tokens": 3,
                                               "total_tokens": 15}))  # fmt: skip
    first = oai.chat.completions.with_raw_response.create(model="default", messages=MSG,
                                                          temperature=0)  # fmt: skip
    second = oai.chat.completions.with_raw_response.create(model="default", messages=MSG,
                                                           temperature=0)  # fmt: skip
    assert len(upstream.requests) == 1
    assert (first.headers["x-nerve-cache"], second.headers["x-nerve-cache"]) == ("miss", "hit")
    one, two = first.parse(), second.parse()
    assert two.model_dump() == one.model_dump()  # the same id, text and usage: the first answer
    assert two.choices[0].message.content == "Paris" and two.usage.total_tokens == 15
    assert second.headers["x-nerve-route"] == "default"
    assert second.headers["x-nerve-model"] == "m1" and second.headers["x-nerve-cache-age"] == "0"


def test_a_repeated_stream_replays_the_same_events(server, oai, upstream):
    upstream.script(Reply(text="Paris is the capital"))
    body = ask(stream=True, stream_options={"include_usage": True})
    raws, states = [], []
    for _ in range(2):
        headers = {"authorization": "Bearer key-a-0001"}
        with httpx.stream("POST", f"{server.url}{URL}", json=body, headers=headers) as r:
            assert r.headers["content-type"].startswith("text/event-stream")
            raws.append(r.read())
            states.append(r.headers["x-nerve-cache"])
    assert states == ["miss", "hit"] and raws[1] == raws[0]
    assert raws[0].endswith(b"data: [DONE]\n\n")
    # The SDK reads the replay as any stream: the text, the usage and the id of the first call.
    chunks = list(
        oai.chat.completions.create(
            model="default",
            messages=MSG,
            temperature=0,
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == (
        "Paris is the capital"
    )
    assert {c.id for c in chunks} == {"chatcmpl-fake1"} and chunks[-1].usage.total_tokens == 18
    assert len(upstream.requests) == 1


@pytest.mark.parametrize("route", ["claude", "translated"])
def test_a_repeated_anthropic_stream_replays_through_the_anthropic_sdk(server, upstream, upstream2,
                                                                        route):  # fmt: skip
    """Passed through to an Anthropic upstream, and translated from an OpenAI one. The SDK
    sends no temperature (it has none): the key's cache takes any (`any_temperature`)."""
    fake = upstream2 if route == "claude" else upstream
    fake.script(Reply(text="Bonjour from Paris"))
    with anthropic.Anthropic(base_url=server.url, api_key="key-hot-0001", max_retries=0) as claude:
        finals = []
        for _ in range(2):
            with claude.messages.stream(model=route, max_tokens=64, messages=MSG) as stream:
                text = "".join(stream.text_stream)
                finals.append((text, stream.get_final_message().model_dump()))
                state = stream.response.headers["x-nerve-cache"]
        assert state == "hit" and finals[1] == finals[0]
    assert finals[0][0] == "Bonjour from Paris" and len(fake.requests) == 1


def test_a_responses_answer_is_cached_too(oai, upstream):
    upstream.script(Reply(text="Paris"))
    answers = [
        oai.responses.with_raw_response.create(
            model="translated", input="capital of France?", temperature=0
        )
        for _ in range(2)
    ]
    assert [a.headers["x-nerve-cache"] for a in answers] == ["miss", "hit"]
    assert answers[1].parse().model_dump() == answers[0].parse().model_dump()
    assert answers[1].parse().output_text == "Paris" and len(upstream.requests) == 1


def test_embeddings_and_answers_off_the_traffic_path_are_cached_too(server, oai, upstream):
    """Embeddings are never sampled: no temperature needed. A route with the guard off and no
    memory has nothing on the traffic path: the cache works there alike."""
    vectors = [oai.embeddings.with_raw_response.create(model="default", input="hi")
               for _ in range(2)]  # fmt: skip
    assert [v.headers["x-nerve-cache"] for v in vectors] == ["miss", "hit"]
    assert vectors[1].parse().model_dump() == vectors[0].parse().model_dump()
    answers = [post(server, ask("open")) for _ in range(2)]
    assert [r.headers["x-nerve-cache"] for r in answers] == ["miss", "hit"]
    assert answers[1].content == answers[0].content and len(upstream.requests) == 2


def test_another_tenant_model_body_or_stream_flag_is_a_miss(server, upstream):
    variants = [
        (ask(), "key-a-0001"),
        (ask(), "key-b-0001"),  # another key: its own scope
        (ask("primary/m1"), "key-a-0001"),  # the same target named otherwise: another body
        (ask("primary/m2"), "key-a-0001"),  # another model
        (ask(messages=[{"role": "user", "content": "and of Spain?"}]), "key-a-0001"),
        (ask(max_tokens=5), "key-a-0001"),
        (ask(stream=True), "key-a-0001"),
    ]
    first = [post(server, body, key) for body, key in variants]
    assert [r.headers["x-nerve-cache"] for r in first] == ["miss"] * len(variants)
    assert len(upstream.requests) == len(variants)
    again = [post(server, body, key) for body, key in variants]
    assert [r.headers["x-nerve-cache"] for r in again] == ["hit"] * len(variants)
    assert len(upstream.requests) == len(variants)
    ids = [r.json()["id"] for r in again[:-1]]
    assert ids == [r.json()["id"] for r in first[:-1]] and len(set(ids)) == len(ids)


def test_the_order_of_keys_in_the_body_does_not_matter(server, upstream):
    body = ask(max_tokens=20)
    post(server, body)
    reordered = json.loads(json.dumps(dict(reversed(list(body.items())))))
    assert post(server, reordered).headers["x-nerve-cache"] == "hit"
    assert len(upstream.requests) == 1


def test_sampled_requests_are_skipped_unless_the_cache_takes_any_temperature(server, upstream):
    hot = {"model": "default", "messages": MSG, "temperature": 0.7}
    no_temperature = {"model": "default", "messages": MSG}
    for body in (hot, no_temperature):
        answers = [post(server, body) for _ in range(2)]
        assert [r.headers["x-nerve-cache"] for r in answers] == ["skip", "skip"]
        assert answers[0].headers["x-nerve-cache-reason"] == "temperature"
    assert len(upstream.requests) == 4
    # The key's own cache (any_temperature) replaces the route's.
    answers = [post(server, hot, key="key-hot-0001") for _ in range(2)]
    assert [r.headers["x-nerve-cache"] for r in answers] == ["miss", "hit"]
    assert len(upstream.requests) == 5


def test_a_route_without_a_cache_says_nothing_about_it(server, upstream):
    answers = [post(server, ask("plain")) for _ in range(2)]
    assert all("x-nerve-cache" not in r.headers for r in answers)
    assert len(upstream.requests) == 2


TOOL = {"id": "call_w", "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}  # fmt: skip
RM = {"id": "call_rm", "type": "function",
      "function": {"name": "Bash", "arguments": '{"command": "rm -rf ~"}'}}  # fmt: skip


@pytest.mark.parametrize("stream", [False, True])
def test_tool_call_answers_are_never_stored(server, upstream, stream):
    upstream.script(Reply(tool_calls=[TOOL]), Reply(tool_calls=[TOOL]))
    answers = []
    for _ in range(2):
        r = post(server, ask(stream=stream))
        assert r.status_code == 200
        answers.append(r)
    assert [r.headers["x-nerve-cache"] for r in answers] == ["miss", "miss"]
    assert "get_weather" in answers[1].text and len(upstream.requests) == 2
    assert cache_stats(server)["not_stored"] == {"tool_calls": 2}


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/messages", {"model": "translated", "max_tokens": 64, "messages": MSG}),
        ("/v1/responses", {"model": "translated", "input": "weather?", "temperature": 0}),
    ],
)
def test_tool_calls_are_never_stored_on_messages_and_responses(server, upstream, path, body,
                                                               stream):  # fmt: skip
    upstream.script(Reply(tool_calls=[TOOL]), Reply(tool_calls=[TOOL]))
    headers = {"authorization": "Bearer key-hot-0001"}
    for _ in range(2):
        r = httpx.post(f"{server.url}{path}", json={**body, "stream": stream}, headers=headers)
        assert r.status_code == 200 and "get_weather" in r.text
        assert r.headers["x-nerve-cache"] == "miss"
    assert len(upstream.requests) == 2
    assert cache_stats(server)["not_stored"] == {"tool_calls": 2}


@pytest.mark.parametrize("stream", [False, True])
def test_an_answer_whose_tool_call_the_guard_blocked_is_not_stored(server, upstream, stream):
    """The client got text in place of the call; the next ask is judged afresh, not replayed."""
    upstream.script(Reply(tool_calls=[RM]), Reply(tool_calls=[RM]))
    for _ in range(2):
        r = post(server, ask("guarded", stream=stream))
        assert "nerve blocked the tool call" in r.text and r.headers["x-nerve-cache"] == "miss"
    assert len(upstream.requests) == 2
    assert cache_stats(server)["not_stored"] == {"guarded" if not stream else "tool_calls": 2}


def test_no_store_looks_up_but_never_writes_and_no_cache_writes_without_looking_up(
    server, upstream
):
    body = ask()
    first = post(server, body, cache_control="no-store")
    assert first.headers["x-nerve-cache"] == "miss"
    second = post(server, body)  # nothing was kept: a miss, now kept
    assert second.headers["x-nerve-cache"] == "miss" and len(upstream.requests) == 2
    fresh = post(server, body, cache_control="no-cache")
    assert fresh.headers["x-nerve-cache"] == "skip"
    assert fresh.headers["x-nerve-cache-reason"] == "no-cache" and len(upstream.requests) == 3
    hit = post(server, body)  # what no-cache fetched replaced the older entry
    assert hit.headers["x-nerve-cache"] == "hit" and hit.json()["id"] == fresh.json()["id"]
    stored_hit = post(server, body, cache_control="no-store")  # serving stores nothing
    assert stored_hit.headers["x-nerve-cache"] == "hit" and len(upstream.requests) == 3
    both = post(server, body, cache_control="no-cache, no-store")
    assert both.headers["x-nerve-cache"] == "skip" and len(upstream.requests) == 4
    assert post(server, body).json()["id"] == fresh.json()["id"]  # no-store wrote nothing


def test_a_stream_cut_midway_is_not_stored(server, upstream):
    upstream.script(Reply(text="Paris is the capital", cut_after=1))
    cut = post(server, ask(stream=True))
    assert cut.headers["x-nerve-cache"] == "miss" and '"error"' in cut.text
    whole = post(server, ask(stream=True))
    assert whole.headers["x-nerve-cache"] == "miss" and len(upstream.requests) == 2
    assert post(server, ask(stream=True)).text == whole.text
    assert cache_stats(server)["stored"] == 1


def test_an_upstream_error_is_never_stored(server, upstream):
    upstream.script(Reply(status=400))
    assert post(server, ask()).status_code == 400
    ok = post(server, ask())
    assert ok.status_code == 200 and ok.headers["x-nerve-cache"] == "miss"
    assert len(upstream.requests) == 2
