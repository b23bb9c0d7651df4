"""SF-5 through the chokepoint: blocked commands (and bypass attempts) never run; allowed ones
run in the workspace, time-boxed and output-capped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nerve.tools.builtin.shell import MAX_OUTPUT


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf /",
        'bash -c "rm -rf ~"',
        "$(echo rm) -rf /",
        "sh <<< 'rm -rf /'",
        "rm -rf {outside}",
        "cd .. && rm -rf outside",
        "echo cm0gLXJmIC8K | base64 -d | sh",
        "find / -delete",
    ],
)
async def test_dangerous_commands_and_bypasses_are_blocked_and_never_run(
    registry, context, outside: Path, command: str
) -> None:
    args = {"command": command.format(outside=outside)}
    result = await registry.execute("shell", json.dumps(args), context())
    assert result.blocked and not result.ok, result
    assert (result.error or "").startswith("blocked by safety: ")
    assert result.content["allowed"] is False
    assert json.loads(result.for_model())["blocked"] is True
    assert (outside / "canary.txt").read_text() == "still here"


async def test_the_verdict_is_judged_against_the_workspace_the_shell_runs_in(
    registry, context, workspace: Path, outside: Path
) -> None:
    """SF-1 + SF-5: a delete outside the workspace is a `workspace` verdict; inside, it runs."""
    refused = await registry.execute(
        "shell", json.dumps({"command": f"rm -rf {outside}"}), context()
    )
    assert refused.blocked and refused.content["category"] == "workspace"
    (workspace / "build").mkdir()
    (workspace / "build" / "x.o").write_text("x")
    done = await registry.execute("shell", '{"command": "rm -rf build"}', context())
    assert done.ok, done
    assert not (workspace / "build").exists()


async def test_an_allowed_command_runs_inside_the_workspace(
    registry, context, workspace: Path
) -> None:
    result = await registry.execute("shell", '{"command": "pwd && echo hi > made.txt"}', context())
    assert result.ok, result
    assert result.content["exit_code"] == 0
    assert result.content["stdout"].strip() == str(workspace)
    assert (workspace / "made.txt").read_text() == "hi\n"


async def test_a_failing_command_reports_its_exit_code_and_stderr(registry, context) -> None:
    result = await registry.execute("shell", '{"command": "ls no-such-file"}', context())
    assert result.ok and result.content["exit_code"] != 0
    assert "no-such-file" in result.content["stderr"]


async def test_output_is_capped(registry, context) -> None:
    cmd = {"command": "head -c 50000 /dev/zero | tr '\\\\0' x"}
    result = await registry.execute("shell", json.dumps(cmd), context())
    assert result.ok, result
    assert len(result.content["stdout"]) == MAX_OUTPUT and result.content["truncated"] is True


async def test_a_command_past_its_timeout_is_killed(registry, context, workspace: Path) -> None:
    cmd = {"command": "sleep 30; touch late.txt", "timeout_seconds": 1}
    result = await registry.execute("shell", json.dumps(cmd), context())
    assert not result.ok and result.error == "the command timed out after 1 s"
    assert result.content["timed_out"] is True
    assert not (workspace / "late.txt").exists()


@pytest.mark.parametrize("seconds", [0, 121, "soon"])
async def test_the_timeout_must_be_1_to_120_seconds(registry, context, seconds) -> None:
    cmd = {"command": "true", "timeout_seconds": seconds}
    result = await registry.execute("shell", json.dumps(cmd), context())
    assert not result.ok and "'timeout_seconds'" in (result.error or "")
