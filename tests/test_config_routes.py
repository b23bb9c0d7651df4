"""Config errors of `when`, `local`, provider `models` and tag targets name the key path
(SPEC GW-5, TP-3; STYLE 6: bad config stops start-up naming the key)."""

from __future__ import annotations

from typing import Any

import pytest

from nerve.config import parse_config
from nerve.errors import ConfigError

CLOUD = {"name": "cloud", "base_url": "http://x", "models": [{"name": "big", "tags": ["large"]}]}
LOCAL = {"name": "local", "base_url": "http://y", "local": True,
         "models": [{"name": "llama", "tags": ["small"]}]}  # fmt: skip
DEFAULT = {"name": "default", "model": {"provider": "cloud", "model": "big"}}


def routes(*extra: dict[str, Any]) -> dict[str, Any]:
    return {"providers": [CLOUD, LOCAL], "routes": [*extra, DEFAULT]}


def named(name: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, "model": {"provider": "local", "model": "llama"}, **fields}


@pytest.mark.parametrize(
    ("data", "path", "words"),
    [
        (routes(named("ta", when={"languages": ["ta", "tam"]})), "routes[0].when.languages",
         "'tam' is not a language nerve detects; use one of en, hi, ta, te, kn, ml, bn"),
        (routes(named("x", when={"task": "poetry"})), "routes[0].when.task", "reasoning"),
        (routes(named("x", when={})), "routes[0].when", "give languages, a task, or both"),
        (routes(named("x", when={"task": "code", "pii": ["email"]})), "routes[0].when",
         "pii applies to task: private only"),
        (routes(named("x", when={"task": "private", "languages": ["hi"]})), "routes[0].when",
         "not by language"),
        (routes(named("x", when={"task": "private"},
                      fallbacks=[{"provider": "cloud", "model": "big"}])),
         "routes[0].fallbacks[0].provider", "cloud/big is not"),
        (routes({"name": "x", "when": {"task": "private"}, "model": {"tags": ["large"]}}),
         "routes[0].model.tags", "local: true; cloud/big is not"),
        (routes({"name": "x", "model": {"tags": ["large", "small"]}}), "routes[0].model.tags",
         "no provider model carries all of [large, small]; tagged models: cloud/big [large]"),
        (routes({"name": "x", "model": {"provider": "local", "model": "llama"},
                 "fallbacks": [{"tags": ["huge"]}]}), "routes[0].fallbacks[0].tags", "[huge]"),
        (routes({"name": "x", "model": {"tags": []}}), "routes[0].model.tags", "at least 1"),
        (routes({"name": "x", "model": {"tags": ["large"], "provider": "cloud"}}),
         "routes[0].model.provider", "unknown key"),
        (routes({"name": "x", "model": {"provider": "nope", "model": "m"}}),
         "routes[0].model.provider", "unknown provider 'nope'"),
        ({"providers": [{**CLOUD, "models": [{"name": "a"}, {"name": "a"}]}], "routes": [DEFAULT]},
         "providers[0].models", "model 'a' is listed twice"),
        ({"providers": [{**CLOUD, "models": [{"name": "a", "priority": -1}]}],
          "routes": [DEFAULT]}, "providers[0].models[0].priority", "greater than or equal to 0"),
    ],
)  # fmt: skip
def test_a_bad_route_or_provider_names_its_key(data, path, words):
    with pytest.raises(ConfigError) as info:
        parse_config(data, environ={})
    assert info.value.path == path, str(info.value)
    assert words in str(info.value)


def test_a_valid_when_and_tag_config_loads():
    config = parse_config(
        routes(
            named("private", when={"task": "private", "pii": ["aadhaar"]}),
            named("ta", when={"languages": ["ta"], "task": "code"}),
            {"name": "big", "when": {"task": "reasoning"}, "model": {"tags": ["large"]}},
        ),
        environ={},
    )
    assert config.routes[0].private and config.provider("local").local
    assert [str(t) for t in config.routes[2].targets] == ["cloud/big"]
