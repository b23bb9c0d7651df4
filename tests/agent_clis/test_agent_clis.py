"""The real Claude Code and Codex CLIs (npm, pinned in package.json) against a nerve server, each
completing a turn in which the fake model calls one tool, the CLI runs it, and the model answers.

The CLI is a second real process; the fake upstream behind nerve is the only fake (the network
edge). Both routes an agent meets are run: passthrough to a provider of the CLI's own protocol,
and translation to a chat-completions provider. `make test` installs the CLIs (`npm ci`); without
them these tests skip, and with CI=true they fail.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from nerve.config import parse_config
from tests.agent_clis.run import claude_result, cli_path, run_claude, run_codex
from tests.fakes.upstream import FakeUpstream, Reply

ANSWER = "All done: the command printed nerve-tool-ok."
ECHO = "echo nerve-tool-ok"
PATCH = "*** Begin Patch\n*** Add File: hello.txt\n+made by nerve\n*** End Patch\n"


def need(name: str) -> None:
    if cli_path(name) is None:
        why = f"{name} CLI not installed: run `make agent-clis` (npm ci --prefix tests/agent_clis)"
        if os.environ.get("CI") == "true":
            pytest.fail(why)
        pytest.skip(why)


def nerve_config(fake: FakeUpstream, protocol: str, *, responses: bool = False) -> Any:
    """One provider of `protocol` on the fake, one route, and the CLIs' own names aliased to it."""
    base = fake.anthropic_base_url if protocol == "anthropic" else fake.openai_base_url
    provider = {"name": "up", "protocol": protocol, "base_url": base, "api_key": "sk-up",
                "responses": responses}  # fmt: skip
    return parse_config({
        "providers": [provider],
        "routes": [{"name": "default", "model": {"provider": "up", "model": "up-model"}}],
        "model_aliases": {"claude-*": "default", "gpt-*": "default"},
    }, environ={})  # fmt: skip


def call(name: str, arguments: dict[str, Any]) -> Reply:
    return Reply(tool_calls=[{"id": "call_1", "type": "function",
                              "function": {"name": name, "arguments": arguments}}])  # fmt: skip


def tool_output(body: dict[str, Any]) -> str:
    """What the CLI sent back as the tool's result, in whichever protocol nerve sent upstream."""
    if "input" in body:  # Responses
        outputs = [i for i in body["input"] if i.get("type", "").endswith("_call_output")]
        return str(outputs[-1]["output"])
    last = body["messages"][-1]
    if last["role"] == "tool":  # chat completions
        return str(last["content"])
    (result,) = [b for b in last["content"] if b["type"] == "tool_result"]  # Messages
    return str(result["content"])


@pytest.mark.parametrize("protocol", ["anthropic", "openai"], ids=["passthrough", "translated"])
def test_claude_code_runs_a_bash_turn_through_nerve(protocol, serve, upstream, tmp_path):
    need("claude")
    server = serve(nerve_config(upstream, protocol))
    upstream.script(call("Bash", {"command": ECHO}), Reply(text=ANSWER))

    run = run_claude(server.url, "Run `echo nerve-tool-ok` and tell me what it printed.", tmp_path)

    result = claude_result(run)
    assert run.returncode == 0 and result["is_error"] is False, run.stdout[-2000:]
    assert result["result"] == ANSWER and result["num_turns"] == 2
    first, second = upstream.requests
    assert {first.path, second.path} == {
        "/v1/messages" if protocol == "anthropic" else "/v1/chat/completions"
    }
    assert first.body["model"] == "up-model"  # claude-opus-… came in, the alias routed it
    assert tool_output(second.body).strip() == "nerve-tool-ok"  # the CLI really ran the command
    if protocol == "anthropic":  # verbatim: the CLI's betas, system array and cache marks
        assert first.headers["anthropic-beta"] and first.headers["anthropic-version"]
        assert isinstance(first.body["system"], list)
        assert "cache_control" in json.dumps(first.body["system"])
    else:
        assert "Bash" in [t["function"]["name"] for t in first.body["tools"]]


@pytest.mark.parametrize("responses", [True, False], ids=["passthrough", "translated"])
def test_codex_runs_a_shell_turn_through_nerve(responses, serve, upstream, tmp_path):
    need("codex")
    server = serve(nerve_config(upstream, "openai", responses=responses))
    upstream.script(call("exec_command", {"cmd": ECHO}), Reply(text=ANSWER))

    run = run_codex(server.url, "Run `echo nerve-tool-ok`.", tmp_path, model="gpt-5-codex")

    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip() == ANSWER
    first, second = upstream.requests
    assert {first.path, second.path} == {"/v1/responses" if responses else "/v1/chat/completions"}
    assert first.body["model"] == "up-model"
    assert "nerve-tool-ok" in tool_output(second.body)


def test_codex_apply_patch_comes_back_as_a_custom_tool_call_and_edits_the_workspace(
    serve, upstream, tmp_path
):
    """gpt-5.5 gets Codex's freeform `apply_patch` tool; a chat model calls it as a function with
    one `input` argument, and nerve must hand it back as a `custom_tool_call` for Codex to run."""
    need("codex")
    server = serve(nerve_config(upstream, "openai"))
    upstream.script(call("apply_patch", {"input": PATCH}), Reply(text=ANSWER))

    run = run_codex(server.url, "Create hello.txt.", tmp_path, model="gpt-5.5")

    assert run.returncode == 0, run.stderr[-3000:]
    assert (Path(run.home) / "work" / "hello.txt").read_text() == "made by nerve\n"
    first, second = upstream.requests
    declared = {t["function"]["name"]: t["function"] for t in first.body["tools"]}
    assert declared["apply_patch"]["parameters"]["required"] == ["input"]
    assert "hello.txt" in tool_output(second.body)
