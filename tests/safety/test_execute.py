"""SF-5: safe shell execution — checked, confined, time-boxed, output-capped."""

from __future__ import annotations

import asyncio
import os
import select
from pathlib import Path

import pytest

from nerve.safety import SafeShell, SafetyEngine


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    root.mkdir()
    return root.resolve()


async def test_an_allowed_command_runs_in_the_allowed_directory(workspace: Path) -> None:
    """SF-5: output, exit code and working directory."""
    result = await SafeShell(allowed_paths=[workspace]).run("echo hi && pwd", cwd=workspace)
    assert result.allowed and result.exit_code == 0
    assert result.stdout.splitlines() == ["hi", str(workspace)]
    assert not result.timed_out and not result.truncated


async def test_the_default_directory_is_the_first_allowed_path(workspace: Path) -> None:
    """SF-5: no cwd → the first allowed path."""
    result = await SafeShell(allowed_paths=[workspace]).run("pwd")
    assert result.stdout.strip() == str(workspace)


async def test_a_failing_command_reports_its_exit_code_and_stderr(workspace: Path) -> None:
    """SF-5: non-zero exit codes and stderr come back as data."""
    result = await SafeShell(allowed_paths=[workspace]).run("echo oops >&2; exit 3")
    assert result.exit_code == 3 and result.stderr.strip() == "oops"


async def test_a_blocked_command_is_not_executed(workspace: Path) -> None:
    """SF-5: the verdict comes back and the command never starts (no marker file)."""
    marker = workspace / "ran"
    result = await SafeShell(allowed_paths=[workspace]).run(f"touch {marker}; rm -rf /etc")
    assert not result.allowed and result.exit_code is None
    assert result.verdict.blocked_by == "rule"
    assert not marker.exists()


async def test_strict_engine_refuses_medium_risk_commands(workspace: Path) -> None:
    """SF-2/SF-5: the shell uses the engine it is given."""
    marker = workspace / "ran"
    shell = SafeShell(allowed_paths=[workspace], engine=SafetyEngine(strict=True))
    result = await shell.run(f"touch {marker}; rm -rf ./build")
    assert not result.allowed and not marker.exists()


async def test_a_directory_outside_the_allowed_paths_is_refused(
    workspace: Path, tmp_path: Path
) -> None:
    """SF-5: cwd must resolve inside an allowed path."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    marker = outside / "ran"
    result = await SafeShell(allowed_paths=[workspace]).run(f"touch {marker}", cwd=outside)
    assert not result.allowed and result.verdict.blocked_by == "rule"
    assert "not inside the allowed paths" in result.verdict.reason
    assert not marker.exists()


@pytest.mark.parametrize("escape", ["link", "../elsewhere", "sub/../../elsewhere"])
async def test_symlinks_and_dotdot_cannot_escape(
    workspace: Path, tmp_path: Path, escape: str
) -> None:
    """SF-5: the real path is checked, after symlinks and `..`."""
    (tmp_path / "elsewhere").mkdir()
    (workspace / "sub").mkdir()
    (workspace / "link").symlink_to(tmp_path / "elsewhere")
    result = await SafeShell(allowed_paths=[workspace]).run("pwd", cwd=workspace / escape)
    assert not result.allowed and "not inside the allowed paths" in result.verdict.reason


async def test_a_missing_directory_is_refused(workspace: Path) -> None:
    """SF-5: a cwd that does not exist is not created or guessed."""
    result = await SafeShell(allowed_paths=[workspace]).run("pwd", cwd=workspace / "nope")
    assert not result.allowed and "does not exist" in result.verdict.reason


async def test_a_command_past_its_timeout_is_killed_with_its_children(workspace: Path) -> None:
    """SF-5: `sleep 5` with timeout 1 is killed, and so is the whole process group."""
    pidfile = workspace / "child.pid"
    command = f"sleep 30 & echo $! > {pidfile}; sleep 5"
    result = await SafeShell(allowed_paths=[workspace]).run(command, timeout_seconds=1)
    assert result.timed_out and result.exit_code is None
    assert result.duration_s < 4
    await _wait_gone(int(pidfile.read_text()))


async def _wait_gone(pid: int) -> None:
    """Wait on the process's pidfd (readable once it exits), under a timeout."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        readable = await asyncio.to_thread(select.select, [fd], [], [], 5)
        assert readable[0], f"process {pid} outlived the timeout"
    finally:
        os.close(fd)


async def test_output_is_capped_and_marked_truncated(workspace: Path) -> None:
    """SF-5: each stream is cut at max_output characters."""
    shell = SafeShell(allowed_paths=[workspace], max_output=100)
    result = await shell.run("head -c 50000 /dev/zero | tr '\\0' a; echo x >&2")
    assert result.truncated and result.stdout == "a" * 100 and result.stderr == "x\n"


async def test_the_default_cap_is_ten_thousand_characters(workspace: Path) -> None:
    """SF-5: 10,000 characters by default."""
    result = await SafeShell(allowed_paths=[workspace]).run("seq 1 20000")
    assert result.truncated and len(result.stdout) == 10_000


@pytest.mark.parametrize("seconds", [0, 0.5, 121, -1, float("nan")])
async def test_a_timeout_outside_one_to_120_seconds_is_a_value_error(
    workspace: Path, seconds: float
) -> None:
    """SF-5: 1-120 s; out of range is rejected with a clear message, not clamped."""
    with pytest.raises(ValueError, match="between 1 and 120"):
        await SafeShell(allowed_paths=[workspace]).run("echo hi", timeout_seconds=seconds)
