"""SPEC PR-3, TP-3: route_model reports the language and task layers, and explains a private
request (as with `x-nerve-private: true`) without calling a model."""

from __future__ import annotations

from typing import Any

import pytest

from nerve.config import Config, parse_config
from tests.fakes.upstream import FakeUpstream
from tests.mcp.conftest import Call, text_of


@pytest.fixture
def mcp_config(upstream: FakeUpstream) -> Config:
    url = upstream.openai_base_url
    providers = [{"name": "cloud", "base_url": url, "api_key": "sk-c"},
                 {"name": "local", "base_url": url, "local": True}]  # fmt: skip
    routes = [
        {"name": "private", "when": {"task": "private"},
         "model": {"provider": "local", "model": "llama"}},
        {"name": "hi", "when": {"languages": ["hi"]},
         "model": {"provider": "cloud", "model": "hindi"}},
        {"name": "code", "when": {"task": "code"},
         "model": {"provider": "cloud", "model": "coder"}},
        {"name": "default", "model": {"provider": "cloud", "model": "general"}},
    ]  # fmt: skip
    return parse_config({"providers": providers, "routes": routes}, environ={})


def _content(result: Any) -> dict[str, Any]:
    assert not result.is_error, text_of(result)
    out: dict[str, Any] = result.structured_content
    return out


async def test_route_model_names_the_language_layer(call: Call, upstream: FakeUpstream) -> None:
    out = _content(await call("route_model", text="mujhe kal ki meeting ka summary bhejo"))
    assert (out["route"], out["layer"], out["model"]) == ("hi", "language", "hindi")
    assert out["reason"].startswith("language: hi detected")
    assert upstream.requests == []


async def test_route_model_names_the_task_layer(call: Call) -> None:
    out = _content(await call("route_model", text="fix the bug in my python script"))
    assert (out["route"], out["layer"], out["score"]) == ("code", "task", 1.0)
    assert out["reason"] == "task: code words: bug, python"


async def test_route_model_explains_a_private_request(call: Call) -> None:
    out = _content(await call("route_model", text="fix the bug in my python script", private=True))
    assert (out["route"], out["layer"], out["provider"]) == ("private", "task", "local")
    assert "x-nerve-private" in out["reason"]


async def test_route_model_refuses_a_private_request_for_a_cloud_model(call: Call) -> None:
    result = await call("route_model", text="hello", model="cloud/general", private=True)
    assert result.is_error
    assert "no model on a provider with local: true" in text_of(result)
