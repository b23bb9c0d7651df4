"""`shell`: SF-5 through `nerve.safety.SafeShell` — checked, confined to the workspace, capped.

The chokepoint checks the command before this runs (safety=("shell", "command")); then `confine`
refuses paths leaving the workspace and computed program names; SafeShell checks again and
confines the working directory, so a blocked command never starts. Output is
capped at 10,000 characters a stream; the timeout is 1-120 s, the whole process group killed.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from nerve.safety import SafeShell, Verdict
from nerve.safety.execute import MAX_TIMEOUT, MIN_TIMEOUT
from nerve.tools.base import tool
from nerve.tools.confine import confine_command
from nerve.tools.result import ToolContext, ToolResult

__all__ = ["MAX_OUTPUT", "shell"]

MAX_OUTPUT = 10_000


def _blocked(verdict: Verdict) -> ToolResult:
    return ToolResult.failure(
        f"blocked by safety: {verdict.reason}", content=verdict.to_dict(), blocked=True
    )


@tool(
    description="Run a shell command in the workspace (dangerous commands are blocked).",
    safety=("shell", "command"),
    timeout=MAX_TIMEOUT + 10,  # SafeShell enforces the command's own limit and kills the group
)
async def shell(
    ctx: ToolContext,
    command: Annotated[str, Field(description="the command line, run by /bin/sh")],
    timeout_seconds: Annotated[
        float, Field(ge=MIN_TIMEOUT, le=MAX_TIMEOUT, description="limit in seconds (1-120)")
    ] = 30,
) -> ToolResult:
    sandbox = ctx.services.files
    runner = SafeShell(
        allowed_paths=sandbox.roots, engine=ctx.services.safety, max_output=MAX_OUTPUT
    )
    workdir = sandbox.workdir()
    refused = confine_command(command, runner.allowed, workdir)
    if refused is not None:
        return _blocked(refused)
    done = await runner.run(command, cwd=workdir, timeout_seconds=timeout_seconds)
    if not done.allowed:
        return _blocked(done.verdict)
    body = {
        "exit_code": done.exit_code,
        "stdout": done.stdout,
        "stderr": done.stderr,
        "timed_out": done.timed_out,
        "truncated": done.truncated,
    }
    if done.timed_out:
        return ToolResult.failure(
            f"the command timed out after {timeout_seconds:g} s", content=body
        )
    return ToolResult.success(body)
