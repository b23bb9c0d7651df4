"""The cascade through HTTP: rules → semantic → context → default (GW-3, GW-4, GW-16)."""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import make_config

ROUTES = [
    {
        "name": "code",
        "rules": [r"\b(debug|traceback|stack ?trace|python|docker|git)\b"],
        "examples": [
            "why does this function throw KeyError",
            "write a dockerfile for my app",
            "fix the failing unit test",
            "refactor this class",
        ],
        "model": {"provider": "primary", "model": "coder"},
    },
    {
        "name": "writing",
        "examples": [
            "write a poem about the sea",
            "draft a short story",
            "compose song lyrics about love",
        ],
        "model": {"provider": "primary", "model": "writer"},
    },
    {"name": "default", "model": {"provider": "primary", "model": "general"}},
]


@pytest.fixture
def server(serve, upstream):
    return serve(make_config({"primary": upstream}, routes=ROUTES))


def route_of(server, *texts):
    messages = []
    for text in texts:
        messages += [{"role": "user", "content": text}, {"role": "assistant", "content": "ok"}]
    r = httpx.post(
        f"{server.url}/v1/chat/completions", json={"model": "auto", "messages": messages[:-1]}
    )
    assert r.status_code == 200, r.text
    return r.headers["x-nerve-route"]


def test_a_rule_keyword_picks_its_route(server, upstream):
    assert route_of(server, "I get a traceback in python") == "code"
    assert upstream.requests[-1].body["model"] == "coder"


def test_a_paraphrase_of_an_example_is_classified_semantically(server):
    assert route_of(server, "please write a poem about the ocean") == "writing"


def test_unrelated_text_falls_through_to_default(server):
    assert route_of(server, "what is the capital of France") == "default"


def test_continue_after_a_debugging_message_stays_on_code(server):
    """GW-4: an uninformative latest message inherits the weighted history."""
    assert route_of(server, "help me debug this stack trace", "continue") == "code"


def test_an_old_keyword_does_not_override_a_clearly_different_latest_message(server):
    """GW-4: the latest message decides when it is informative on its own."""
    assert route_of(server, "debug my python script", "write a poem about the sea") == "writing"


def test_input_over_140k_characters_skips_classification(server):
    """GW-16: huge input goes straight to default, even with a rule keyword in it."""
    assert route_of(server, "python traceback " + "x " * 71_000) == "default"
