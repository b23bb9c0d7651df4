"""The `nerve` command: --help, --version, config check, and serve's refusals."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading

import httpx
from click.testing import CliRunner

from nerve import __version__
from nerve.cli import cli


def test_version_and_help():
    runner = CliRunner()
    assert __version__ in runner.invoke(cli, ["--version"]).output
    for args in (["--help"], ["serve", "--help"], ["config", "check", "--help"]):
        result = runner.invoke(cli, args)
        assert result.exit_code == 0 and "Usage" in result.output


def _commands(group, path=()):
    yield path
    for name, command in getattr(group, "commands", {}).items():
        yield from _commands(command, (*path, name))


def test_every_help_text_is_for_users_not_for_the_spec():
    """--help shows no internal feature IDs (`SPEC LG`, `LG-2`) on any command."""
    runner = CliRunner()
    paths = list(_commands(cli))
    assert len(paths) > 20  # every subcommand was found
    for path in paths:
        result = runner.invoke(cli, [*path, "--help"])
        assert result.exit_code == 0, path
        assert not re.search(r"\bSPEC\b|\b[A-Z]{2}-\d", result.output), (path, result.output)


def test_config_check_accepts_a_good_file(tmp_path):
    path = tmp_path / "nerve.yaml"
    path.write_text(
        "providers:\n  - {name: local, preset: ollama}\n"
        "routes:\n  - {name: default, model: {provider: local, model: llama3}}\n"
    )
    result = CliRunner().invoke(cli, ["config", "check", str(path), "--json"])
    assert result.exit_code == 0
    assert json.loads(result.output)["routes"] == ["default"]


def test_config_check_names_the_bad_key_and_fails(tmp_path):
    path = tmp_path / "nerve.yaml"
    path.write_text("limits:\n  rate:\n    burst: -5\n")
    result = CliRunner().invoke(cli, ["config", "check", str(path)])
    assert result.exit_code == 1
    assert "limits.rate.burst" in result.output
    result = CliRunner().invoke(cli, ["config", "check", str(path), "--json"])
    assert json.loads(result.output)["path"] == "limits.rate.burst"


def test_config_check_lists_every_problem_and_names_an_unset_variable(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("server:\n  prot: 80\nmemry: {}\n")
    result = CliRunner().invoke(cli, ["config", "check", str(bad), "--json"])
    listed = json.loads(result.output)["problems"]
    assert result.exit_code == 1
    assert listed == [
        {"path": "server.prot", "error": "unknown key; did you mean port?"},
        {"path": "memry", "error": "unknown key; did you mean memory?"},
    ]
    good = tmp_path / "nerve.yaml"
    good.write_text(
        "providers:\n  - {name: p, base_url: 'https://x.io/v1', api_key: '${NERVE_TEST_UNSET}'}\n"
        "routes:\n  - {name: default, model: {provider: p, model: m}}\n"
    )
    result = CliRunner().invoke(cli, ["config", "check", str(good)], env={"NERVE_TEST_UNSET": ""})
    assert result.exit_code == 0
    assert "provider p has no API key ($NERVE_TEST_UNSET is not set)" in result.output


def test_serve_refuses_an_invalid_config_naming_the_key(tmp_path):
    path = tmp_path / "nerve.yaml"
    path.write_text("server:\n  prot: 80\n")
    result = CliRunner().invoke(cli, ["serve", "--config", str(path)])
    assert result.exit_code == 1 and "server.prot: unknown key" in result.output


def test_serve_refuses_a_public_address_without_api_keys():
    result = CliRunner().invoke(cli, ["serve", "--host", "0.0.0.0", "--port", "0"])
    assert result.exit_code == 1 and "server.api_keys" in result.output


def test_nerve_serve_starts_on_defaults_and_answers_health(tmp_path):
    """`make run` path: a real process on built-in defaults, no API key needed to start."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("NERVE_CONFIG", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "nerve", "serve", "--port", "0", "--log-level", "info"],
        cwd=tmp_path,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    port: list[int] = []
    ready = threading.Event()

    def watch():
        for line in proc.stderr:
            if "Uvicorn running on" in line:
                port.append(int(line.rsplit(":", 1)[1].split()[0]))
                ready.set()

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        assert ready.wait(30), "the server did not start"
        health = httpx.get(f"http://127.0.0.1:{port[0]}/health").json()
        assert health["status"] == "ok"
        assert health["providers"] == {"openai": "no API key", "anthropic": "no API key"}
        r = httpx.post(
            f"http://127.0.0.1:{port[0]}/v1/chat/completions",
            json={"model": "auto", "messages": [{"role": "user", "content": "hi"}]},
        )
        assert r.status_code == 502 and "no API key" in r.json()["error"]["message"]
    finally:
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=15)
        watcher.join(timeout=5)
        proc.stderr.close()
    assert code == 0
