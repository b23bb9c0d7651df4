"""Memory for any client (SPEC TP-2), through the real SDKs and two real processes: a fact the
`nerve memory` CLI stores (its own process) reaches the upstream as context when `asha` chats
through the server; the exchange is then stored as turns another process can recall."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import anthropic
import httpx
import openai
import pytest
import yaml

from nerve.config import parse_config
from tests.conftest import make_config
from tests.fakes.upstream import Reply

ROUTES = [
    {"name": "default", "model": {"provider": "chat", "model": "m1"},
     "memory": {"recall": True, "store": True}},
    {"name": "claude", "model": {"provider": "anthropic", "model": "claude-up"},
     "memory": {"recall": True}},
    {"name": "plain", "model": {"provider": "chat", "model": "m1"}},
]  # fmt: skip


@pytest.fixture
def store_file(tmp_path: Path) -> Path:
    path = tmp_path / "nerve.yaml"  # what the CLI processes read: the server's store
    path.write_text(yaml.safe_dump({"storage": {"url": f"sqlite:///{tmp_path / 'nerve.db'}"}}))
    return path


def cli(store_file: Path, *args: str) -> dict:
    command = [sys.executable, "-m", "nerve", "memory", *args, "--config", str(store_file)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture
def server(serve, upstream, upstream2, tmp_path):
    storage = {"url": f"sqlite:///{tmp_path / 'nerve.db'}"}
    return serve(make_config({"chat": upstream, "anthropic": upstream2}, routes=ROUTES,
                             storage=storage))  # fmt: skip


def system_text(messages: list[dict]) -> str:
    return "\n".join(m["content"] for m in messages if m["role"] == "system")


def test_a_fact_stored_by_another_process_reaches_the_upstream_and_the_turn_is_kept(
    server, upstream, store_file
):
    cli(store_file, "facts", "--user", "asha", "--entity", "asha", "--attribute", "diet",
        "--value", "vegetarian")  # fmt: skip
    upstream.script(Reply(text="Try the paneer tikka."))
    with openai.OpenAI(base_url=f"{server.url}/v1", api_key="x", max_retries=0) as client:
        raw = client.chat.completions.with_raw_response.create(
            model="default", user="asha",
            messages=[{"role": "system", "content": "You are a chef."},
                      {"role": "user", "content": "what should I cook for my diet tonight?"}],
        )  # fmt: skip
    assert raw.parse().choices[0].message.content == "Try the paneer tikka."
    assert int(raw.headers["x-nerve-memory"]) >= 1
    sent = upstream.requests[-1].body["messages"]
    assert sent[0] == {"role": "system", "content": "You are a chef."}  # the client's, first
    assert sent[1]["role"] == "system" and "vegetarian" in sent[1]["content"]
    assert sent[-1]["content"] == "what should I cook for my diet tonight?"

    deadline = time.monotonic() + 20  # the store runs after the answer, off its path
    while time.monotonic() < deadline:
        found = cli(store_file, "recall", "--user", "asha", "--query", "paneer tikka")
        if any("paneer" in json.dumps(r["data"]) for r in found["records"]):
            break
    else:
        raise AssertionError(f"the answer was never stored as a turn: {found}")
    stats = httpx.get(f"{server.url}/stats").json()["traffic"]["memory"]
    assert stats["recalled"] >= 1 and stats["stored"] == 2


def test_the_header_names_the_user_and_an_unknown_one_gets_nothing(server, upstream, store_file):
    cli(store_file, "facts", "--user", "ravi", "--entity", "ravi", "--attribute", "city",
        "--value", "Chennai")  # fmt: skip
    upstream.script(Reply(text="ok"), Reply(text="ok"))
    url = f"{server.url}/v1/chat/completions"
    body = {"model": "default", "messages": [{"role": "user", "content": "which city am I in?"}]}
    named = httpx.post(url, json=body, headers={"x-nerve-user": "ravi"})
    assert named.status_code == 200 and int(named.headers["x-nerve-memory"]) >= 1
    assert "Chennai" in system_text(upstream.requests[-1].body["messages"])
    nobody = httpx.post(url, json=body, headers={"x-nerve-user": "nobody-here"})
    assert nobody.status_code == 200 and nobody.headers["x-nerve-memory"] == "0"
    assert system_text(upstream.requests[-1].body["messages"]) == ""


def test_anthropic_metadata_user_id_gets_its_context_appended_to_system(
    server, upstream2, store_file
):
    cli(store_file, "facts", "--user", "meena", "--entity", "meena", "--attribute", "language",
        "--value", "Tamil")  # fmt: skip
    upstream2.script(Reply(text="vanakkam"))
    cached = {
        "type": "text",
        "text": "You are Claude Code.",
        "cache_control": {"type": "ephemeral"},
    }
    with anthropic.Anthropic(base_url=server.url, api_key="x", max_retries=0) as client:
        raw = client.messages.with_raw_response.create(
            model="claude", max_tokens=64, system=[cached], metadata={"user_id": "meena"},
            messages=[{"role": "user", "content": "which language do I speak?"}],
        )  # fmt: skip
    assert raw.parse().content[0].text == "vanakkam" and int(raw.headers["x-nerve-memory"]) >= 1
    system = upstream2.requests[-1].body["system"]
    assert system[0] == cached and "Tamil" in system[1]["text"]  # after the cached prefix


def test_a_route_without_memory_sends_the_request_as_it_came(server, upstream, store_file):
    cli(store_file, "facts", "--user", "asha", "--entity", "asha", "--attribute", "diet",
        "--value", "vegan")  # fmt: skip
    upstream.script(Reply(text="ok"))
    body = {"model": "plain", "user": "asha", "messages": [{"role": "user", "content": "diet?"}]}
    answer = httpx.post(f"{server.url}/v1/chat/completions", json=body)
    assert answer.status_code == 200 and "x-nerve-memory" not in answer.headers
    assert upstream.requests[-1].body["messages"] == body["messages"]


def test_a_streamed_answer_is_stored_once_the_stream_has_ended(server, upstream, store_file):
    upstream.script(
        Reply(
            text="Rasam needs tamarind and pepper.", chunks=["Rasam needs ", "tamarind and pepper."]
        )
    )
    with openai.OpenAI(base_url=f"{server.url}/v1", api_key="x", max_retries=0) as client:
        stream = client.chat.completions.create(
            model="default", stream=True, messages=[{"role": "user", "content": "rasam?"}],
            extra_headers={"x-nerve-user": "kavya"},
        )  # fmt: skip
        text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert text == "Rasam needs tamarind and pepper."
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        found = cli(store_file, "recall", "--user", "kavya", "--query", "tamarind pepper")
        contents = [r["data"].get("content") for r in found["records"]]
        if "Rasam needs tamarind and pepper." in contents:
            break
    else:
        raise AssertionError(f"the streamed answer was never stored: {found}")
    assert "rasam?" in contents  # the question too, as its own turn


def test_a_broken_store_never_fails_the_call(server, upstream, tmp_path):
    """Another process breaks the store under the server (its tables dropped): recall and store
    fail, are counted, and the client still gets its answer."""
    with sqlite3.connect(tmp_path / "nerve.db") as db:
        db.executescript("DROP TABLE records; DROP TABLE user_versions;")
    upstream.script(Reply(text="still here"))
    body = {"model": "default", "user": "asha",
            "messages": [{"role": "user", "content": "what do I like to eat?"}]}  # fmt: skip
    answer = httpx.post(f"{server.url}/v1/chat/completions", json=body)
    assert answer.status_code == 200 and answer.headers["x-nerve-memory"] == "0"
    assert answer.json()["choices"][0]["message"]["content"] == "still here"
    assert upstream.requests[-1].body["messages"] == body["messages"]  # sent as it came
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:  # the store fails after the answer, off its path
        memory = httpx.get(f"{server.url}/stats").json()["traffic"]["memory"]
        if memory.get("failures", 0) >= 2:
            break
    assert memory["failures"] >= 2 and "stored" not in memory, memory


def test_recall_does_not_make_equal_models_skip_their_turn(serve, upstream, store_file, tmp_path):
    """A recalled block is routed again only where it could send the request private, so the
    round-robin of a tag target still advances once per request."""
    cli(store_file, "facts", "--user", "asha", "--entity", "asha", "--attribute", "diet",
        "--value", "vegetarian")  # fmt: skip
    models = [{"name": "a", "tags": ["big"]}, {"name": "b", "tags": ["big"]}]
    config = parse_config({
        "providers": [{"name": "chat", "base_url": upstream.openai_base_url, "models": models}],
        "routes": [{"name": "default", "model": {"tags": ["big"]}, "memory": {"recall": True}}],
        "storage": {"url": f"sqlite:///{tmp_path / 'nerve.db'}"},
    }, environ={})  # fmt: skip
    server = serve(config)
    upstream.script(*[Reply(text="ok")] * 4)
    body = {"model": "auto", "user": "asha",
            "messages": [{"role": "user", "content": "what is my diet?"}]}  # fmt: skip
    served = []
    for _ in range(4):
        answer = httpx.post(f"{server.url}/v1/chat/completions", json=body)
        assert int(answer.headers["x-nerve-memory"]) >= 1
        served.append(answer.headers["x-nerve-model"])
    assert served == ["a", "b", "a", "b"]
