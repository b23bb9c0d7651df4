"""Tag targets, priority and round-robin (SPEC GW-5, TP-3): `model: {tags: [...]}` selects every
provider model carrying all the tags; lower priority first; equals take turns, per plan."""

from __future__ import annotations

from typing import Any

import pytest

from nerve.config import RouteConfig, Target, parse_config
from nerve.gateway.app import GatewayState

URL = "http://127.0.0.1:9/v1"
PROVIDERS: list[dict[str, Any]] = [
    {"name": "openai", "base_url": URL, "api_key": "sk-o", "models": [
        {"name": "gpt-4o", "tags": ["large", "coding"], "priority": 1},
        {"name": "gpt-4o-mini", "tags": ["small"], "priority": 1}]},
    {"name": "claude", "base_url": URL, "api_key": "sk-c", "models": [
        {"name": "sonnet", "tags": ["large", "coding"], "priority": 1},
        {"name": "haiku", "tags": ["small", "coding"], "priority": 2}]},
    {"name": "local", "base_url": URL, "local": True, "models": [
        {"name": "qwen-coder", "tags": ["large", "coding"], "priority": 2},
        {"name": "llama", "tags": ["small"]}]},
]  # fmt: skip


def config(routes: list[dict[str, Any]], **extra: Any) -> Any:
    return parse_config({"providers": PROVIDERS, "routes": routes, **extra}, environ={})


def tiers(route: RouteConfig) -> list[list[str]]:
    return [[str(t) for t in tier] for tier in route.tiers]


def test_a_tag_target_expands_to_every_model_with_all_the_tags_by_priority():
    code = config([{"name": "default", "model": {"tags": ["large", "coding"]}}]).routes[0]
    assert tiers(code) == [["openai/gpt-4o", "claude/sonnet"], ["local/qwen-coder"]]
    assert [str(t) for t in code.targets] == ["openai/gpt-4o", "claude/sonnet", "local/qwen-coder"]


def test_tag_targets_and_named_targets_mix_and_a_model_is_never_listed_twice():
    route = config([{"name": "default", "model": {"provider": "claude", "model": "sonnet"},
                     "fallbacks": [{"tags": ["coding"]}, {"provider": "local", "model": "llama"}]}]
                   ).routes[0]  # fmt: skip
    assert tiers(route) == [
        ["claude/sonnet"],
        ["openai/gpt-4o"],  # sonnet is already first
        ["claude/haiku", "local/qwen-coder"],
        ["local/llama"],
    ]


def test_a_model_without_priority_has_priority_1():
    small = config([{"name": "default", "model": {"tags": ["small"]}}]).routes[0]
    assert tiers(small) == [["openai/gpt-4o-mini", "local/llama"], ["claude/haiku"]]


def test_a_route_of_named_targets_is_as_before():
    route = RouteConfig(name="r", model=Target(provider="a", model="m"),
                        fallbacks=[Target(provider="b", model="n")])  # fmt: skip
    assert [str(t) for t in route.targets] == ["a/m", "b/n"]
    assert tiers(route) == [["a/m"], ["b/n"]]


@pytest.fixture
async def gateway():
    state = GatewayState(config([
        {"name": "code", "model": {"tags": ["large", "coding"]}},
        {"name": "default", "model": {"provider": "openai", "model": "gpt-4o-mini"}},
    ]))  # fmt: skip
    await state.open()
    yield state.gateway
    await state.close()


def order(gateway: Any, model: str = "code") -> list[str]:
    plan = gateway.plan({"model": model, "messages": [{"role": "user", "content": "x"}]})
    return [str(t) for t in plan.targets]


async def test_equal_priorities_take_turns_and_the_lower_priority_stays_last(gateway):
    assert [order(gateway) for _ in range(4)] == [
        ["openai/gpt-4o", "claude/sonnet", "local/qwen-coder"],
        ["claude/sonnet", "openai/gpt-4o", "local/qwen-coder"],
        ["openai/gpt-4o", "claude/sonnet", "local/qwen-coder"],
        ["claude/sonnet", "openai/gpt-4o", "local/qwen-coder"],
    ]
    assert order(gateway, "default") == ["openai/gpt-4o-mini"]  # nothing to rotate


async def test_each_route_keeps_its_own_turn(gateway):
    order(gateway)
    assert order(gateway, "openai/gpt-4o") == ["openai/gpt-4o"]  # a named model: no turn
    assert order(gateway)[0] == "claude/sonnet"


async def test_with_learning_on_the_learnt_order_replaces_the_turns():
    state = GatewayState(config([{"name": "default", "model": {"tags": ["large", "coding"]}}],
                                learning={"enabled": True, "exploration": 0}))  # fmt: skip
    await state.open()
    try:
        firsts = {order(state.gateway, "default")[0] for _ in range(4)}
        assert firsts == {"openai/gpt-4o"}  # the configured order is the prior
    finally:
        await state.close()
