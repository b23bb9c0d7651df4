"""Config loading (DESIGN.md "Config contract"): interpolation, defaults, presets, errors."""

from __future__ import annotations

import pytest

from nerve.config import load_config, parse_config
from nerve.errors import ConfigError


def test_builtin_defaults_need_no_file_and_no_key(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = load_config(None, environ={})
    assert config.server.host == "127.0.0.1" and config.server.port == 8080
    assert [r.name for r in config.routes] == ["default"]
    assert all(p.missing_key for p in config.providers)


def test_variables_are_interpolated_with_defaults():
    config = parse_config(
        {
            "server": {"port": "${PORT:-9000}"},
            "providers": [
                {"name": "o", "preset": "openai"},
                {"name": "x", "base_url": "${URL}", "api_key": "${XKEY}"},
            ],
            "routes": [{"name": "default", "model": {"provider": "o", "model": "m"}}],
        },
        environ={"OPENAI_API_KEY": "sk-1", "URL": "http://127.0.0.1:1/v1", "XKEY": "k"},
    )
    assert config.server.port == 9000
    assert config.provider("o").api_key == "sk-1"
    assert config.provider("o").base_url == "https://api.openai.com/v1"
    assert config.provider("x").base_url == "http://127.0.0.1:1/v1"


def test_an_environment_value_cannot_inject_structure():
    config = parse_config({"storage": {"url": "${EVIL}"}}, environ={"EVIL": "x\nserver: {port: 1}"})
    assert config.storage.url == "x\nserver: {port: 1}" and config.server.port == 8080


@pytest.mark.parametrize(
    ("data", "path"),
    [
        ({"servr": {}}, "servr"),
        ({"server": {"port": 70000}}, "server.port"),
        ({"limits": {"breaker": {"failures": 0}}}, "limits.breaker.failures"),
        (
            {
                "providers": [{"name": "a", "base_url": "ftp://x"}],
                "routes": [{"name": "default", "model": {"provider": "a", "model": "m"}}],
            },
            "providers[0].base_url",
        ),
        (
            {
                "providers": [{"name": "a", "base_url": "http://x"}],
                "routes": [{"name": "default", "model": {"provider": "b", "model": "m"}}],
            },
            "routes[0].model.provider",
        ),
        (
            {
                "providers": [{"name": "a", "base_url": "http://x"}],
                "routes": [{"name": "code", "model": {"provider": "a", "model": "m"}}],
            },
            "routes",
        ),
        (
            {
                "providers": [{"name": "a", "base_url": "http://x"}],
                "routes": [
                    {"name": "default", "rules": ["(("], "model": {"provider": "a", "model": "m"}}
                ],
            },
            "routes[0].rules",
        ),
        ({"providers": [{"name": "a", "preset": "nope"}]}, "providers[0].preset"),
    ],
)
def test_a_bad_config_names_the_key(data, path):
    with pytest.raises(ConfigError) as info:
        parse_config(data, environ={})
    assert info.value.path == path
    assert str(info.value).startswith(path + ": ")


def test_invalid_yaml_says_where(tmp_path):
    file = tmp_path / "nerve.yaml"
    file.write_text("server:\n  port: [1,\n")
    with pytest.raises(ConfigError, match="line"):
        load_config(str(file), environ={})


def test_config_file_resolution_order(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "nerve.yaml").write_text("server: {port: 1111}\n")
    other = tmp_path / "other.yaml"
    other.write_text("server: {port: 2222}\n")
    assert load_config(None, environ={}).server.port == 1111
    assert load_config(None, environ={"NERVE_CONFIG": str(other)}).server.port == 2222
    assert load_config(str(other), environ={"NERVE_CONFIG": "nope"}).server.port == 2222


def test_the_example_config_in_the_docs_is_valid():
    from pathlib import Path

    example = Path(__file__).resolve().parent.parent / "examples" / "nerve.yaml"
    config = load_config(str(example), environ={"OPENAI_API_KEY": "sk-x"})
    assert [r.name for r in config.routes] == ["private", "indic", "code", "reasoning", "default"]
    assert config.routes[0].private and config.provider("local").local
    assert config.routes[2].guard.tool_calls == "block"
    assert not config.provider("openai").missing_key
    assert config.provider("internal").missing_key
    assert not config.provider("local").missing_key  # keyless local server


@pytest.mark.parametrize(
    "key", [("intent", "llm_route"), ("safety", "llm_judge"), ("pipeline", "answer_model")]
)
def test_model_references_must_name_a_route_or_a_provider_model(key):
    section, field = key
    base = {
        "providers": [{"name": "a", "base_url": "http://x"}],
        "routes": [{"name": "default", "model": {"provider": "a", "model": "m"}}],
    }
    for good in ("auto", "default", "a/some-model"):
        parse_config({**base, section: {field: good}}, environ={})
    with pytest.raises(ConfigError) as info:
        parse_config({**base, section: {field: "nope"}}, environ={})
    assert info.value.path == f"{section}.{field}"


@pytest.mark.parametrize(
    ("traffic", "path"),
    [
        ({"guard": {"tool_calls": "maybe"}}, "routes[0].guard.tool_calls"),
        ({"guard": {"tools": {"Bash": "python"}}}, "routes[0].guard.tools.Bash.kind"),
        ({"guard": {"tools": {"Bash": {"kind": "shell", "arg": "cmd"}}}},
         "routes[0].guard.tools.Bash.arg"),
        ({"memory": {"recall": "sometimes"}}, "routes[0].memory.recall"),
        ({"memory": {"remember": True}}, "routes[0].memory.remember"),
    ],
)  # fmt: skip
def test_a_bad_guard_or_path_memory_setting_names_its_key(traffic, path):
    route = {"name": "default", "model": {"provider": "p", "model": "m"}, **traffic}
    with pytest.raises(ConfigError) as caught:
        parse_config({"providers": [{"name": "p", "base_url": "http://x"}], "routes": [route]},
                     environ={})  # fmt: skip
    assert caught.value.path == path


def test_every_problem_is_named_at_once_with_a_guess_for_misspelt_keys():
    data = {
        "providers": [{"name": "p", "bse_url": "https://x.io/v1"}],
        "routes": [{"name": "default", "model": {"provider": "p", "model": "m"}, "timout": 5}],
        "limits": {"max_body_bytes": -3},
        "memry": {"enabled": True},
    }
    with pytest.raises(ConfigError) as info:
        parse_config(data, environ={})
    found = dict(info.value.problems)
    assert found == {
        "providers[0].bse_url": "unknown key; did you mean base_url?",
        "routes[0].timout": found["routes[0].timout"],
        "limits.max_body_bytes": "Input should be greater than or equal to 1024",
        "memry": "unknown key; did you mean memory?",
    }
    assert found["routes[0].timout"].startswith("unknown key (known here: name, rules")
    assert "providers[0].base_url" not in found, "the misspelling says it already"
    assert str(info.value).startswith("4 problems:\n  providers[0].bse_url: unknown key")
    assert info.value.path == "providers[0].bse_url"


def test_an_unset_variable_is_named_where_the_key_is_missing():
    config = parse_config(
        {
            "providers": [
                {"name": "a", "base_url": "https://x.io/v1", "api_key": "${NOT_SET_KEY_XYZ}"},
                {"name": "b", "base_url": "https://y.io/v1", "api_key": " "},
            ],
            "routes": [{"name": "default", "model": {"provider": "a", "model": "m"}}],
        },
        environ={},
    )
    a, b = config.providers
    assert a.missing_key and a.missing_key_why == "$NOT_SET_KEY_XYZ is not set"
    assert b.missing_key and b.missing_key_why == "api_key is empty"
