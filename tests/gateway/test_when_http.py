"""Language, task and tag routing through the real HTTP app and the real OpenAI SDK (SPEC GW-5,
TP-3): the layer that chose shows in `x-nerve-decided-by` and in `/evolution`."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import httpx
import openai
import pytest

from nerve.config import parse_config

TAMIL = "naan inniki office ku late ah varuven, meeting ah reschedule pannunga"
AADHAAR = "2345 6789 0124"


@pytest.fixture
def server(serve, upstream, upstream2):
    providers = [
        {"name": "cloud", "base_url": upstream.openai_base_url, "api_key": "sk-c", "models": [
            {"name": "big-a", "tags": ["large"]}, {"name": "big-b", "tags": ["large"]}]},
        {"name": "local", "base_url": upstream2.openai_base_url, "local": True},
    ]  # fmt: skip
    routes = [
        {"name": "private", "when": {"task": "private"},
         "model": {"provider": "local", "model": "llama"}},
        {"name": "ta", "when": {"languages": ["ta"]},
         "model": {"provider": "cloud", "model": "tamil-model"}},
        {"name": "big", "when": {"task": "reasoning"}, "model": {"tags": ["large"]}},
        {"name": "default", "model": {"provider": "cloud", "model": "general"}},
    ]  # fmt: skip
    return serve(parse_config({"providers": providers, "routes": routes}, environ={}))


@pytest.fixture
def client(server):
    with openai.OpenAI(base_url=f"{server.url}/v1", api_key="k", max_retries=0) as client:
        yield client


def ask(client: openai.OpenAI, text: str, model: str = "auto") -> Any:
    return client.chat.completions.with_raw_response.create(
        model=model, messages=[{"role": "user", "content": text}]
    )


def test_a_romanized_tamil_request_goes_to_the_tamil_route(client, upstream):
    raw = ask(client, TAMIL)
    assert raw.headers["x-nerve-route"] == "ta"
    assert raw.headers["x-nerve-decided-by"] == "language"
    assert raw.headers["x-nerve-model"] == "tamil-model"
    assert upstream.requests[-1].body["model"] == "tamil-model"
    assert raw.parse().choices[0].message.content == "Hello from fake"


def test_english_goes_to_default_and_says_so(client):
    raw = ask(client, "what is the capital of France")
    assert (raw.headers["x-nerve-route"], raw.headers["x-nerve-decided-by"]) == (
        "default",
        "default",
    )


def test_a_named_route_has_no_deciding_layer(client):
    assert "x-nerve-decided-by" not in ask(client, TAMIL, model="default").headers


def test_personal_data_is_served_only_by_the_local_provider(client, upstream, upstream2):
    raw = ask(client, f"my aadhaar number is {AADHAAR}, what documents do I need")
    assert (raw.headers["x-nerve-route"], raw.headers["x-nerve-provider"]) == ("private", "local")
    assert raw.headers["x-nerve-decided-by"] == "task"
    assert len(upstream2.requests) == 1 and upstream.requests == []


def test_equal_tagged_models_take_turns_across_requests(client, upstream):
    served = [ask(client, "prove that there are infinitely many primes").headers["x-nerve-model"]
              for _ in range(4)]  # fmt: skip
    assert served == ["big-a", "big-b", "big-a", "big-b"]
    assert [r.body["model"] for r in upstream.requests] == served


def test_evolution_reports_the_layers_and_each_routes_when(client, server):
    ask(client, TAMIL)
    ask(client, "prove that there are infinitely many primes")
    ask(client, "hello", model="default")
    routing = httpx.get(f"{server.url}/evolution").json()["routing"]
    assert routing["layers"][:4] == ["rules", "language", "task", "semantic"]
    assert routing["decided_by"] == {"language": 1, "task": 1, "named": 1}
    assert routing["routes"]["ta"]["when"] == {"languages": ["ta"]}
    assert routing["routes"]["big"]["tiers"] == [["cloud/big-a", "cloud/big-b"]]
    assert routing["routes"]["default"]["when"] is None


def test_the_private_header_keeps_a_request_on_local_providers(client, upstream, upstream2):
    raw = client.chat.completions.with_raw_response.create(
        model="auto", messages=[{"role": "user", "content": "summarise my notes"}],
        extra_headers={"x-nerve-private": "true"},
    )  # fmt: skip
    assert (raw.headers["x-nerve-route"], raw.headers["x-nerve-provider"]) == ("private", "local")
    assert len(upstream2.requests) == 1 and upstream.requests == []
    with pytest.raises(openai.PermissionDeniedError) as caught:
        client.chat.completions.create(
            model="cloud/general", messages=[{"role": "user", "content": "summarise my notes"}],
            extra_headers={"x-nerve-private": "true"},
        )  # fmt: skip
    assert caught.value.body["code"] == "private_needs_local" and upstream.requests == []


def test_personal_data_recalled_from_memory_routes_the_request_private(
    serve, upstream, upstream2, tmp_path
):
    """Recall adds the context block before routing: a phone number it brings goes private.
    The fact is stored by another process (the CLI) in the server's store."""
    storage = {"url": f"sqlite:///{tmp_path / 'n.db'}"}
    (tmp_path / "store.yaml").write_text(json.dumps({"storage": storage}))
    command = [sys.executable, "-m", "nerve", "memory", "facts", "--user", "asha", "--entity",
               "asha", "--attribute", "phone", "--value", "+91 98765 43210", "--config",
               str(tmp_path / "store.yaml")]  # fmt: skip
    assert subprocess.run(command, capture_output=True, timeout=60).returncode == 0
    providers = [
        {"name": "cloud", "base_url": upstream.openai_base_url, "api_key": "sk-c"},
        {"name": "local", "base_url": upstream2.openai_base_url, "local": True},
    ]
    routes = [
        {"name": "private", "when": {"task": "private"},
         "model": {"provider": "local", "model": "llama"}},
        {"name": "default", "model": {"provider": "cloud", "model": "general"},
         "memory": {"recall": True}},
    ]  # fmt: skip
    config = {"providers": providers, "routes": routes, "storage": storage}
    server = serve(parse_config(config, environ={}))
    body = {"model": "auto", "user": "asha",
            "messages": [{"role": "user", "content": "what is my phone number"}]}  # fmt: skip
    answer = httpx.post(f"{server.url}/v1/chat/completions", json=body)
    assert answer.status_code == 200 and int(answer.headers["x-nerve-memory"]) >= 1
    assert answer.headers["x-nerve-route"] == "private" and upstream.requests == []
    assert "98765" in str(upstream2.requests[-1].body["messages"])
