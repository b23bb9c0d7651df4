"""`read_file`, `write_file`, `send_file`: confined to `assistant.files.allowed_paths`.

Every path goes through `ctx.services.files` (the `FileSandbox`): a refusal says the path is not
allowed. `send_file` sends nothing itself: its result names the file and the channel attaches it.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from nerve.tools.base import tool
from nerve.tools.result import ToolContext, ToolError, ToolResult

__all__ = ["read_file", "send_file", "write_file"]

Path_ = Annotated[str, Field(description="a path inside the workspace (relative or absolute)")]


def _refused(exc: Exception) -> ToolError:
    """PathNotAllowed, a missing file or a size cap, said plainly to the model."""
    return ToolError(str(exc))


@tool(description="Read a text file from the workspace.")
async def read_file(ctx: ToolContext, path: Path_) -> dict[str, Any]:
    try:
        text, cut = ctx.services.files.read_text(path)
    except (OSError, ValueError) as exc:
        raise _refused(exc) from None
    return {"path": path, "content": text, "truncated": cut}


@tool(description="Write (create or replace) a text file in the workspace.")
async def write_file(
    ctx: ToolContext, path: Path_, content: Annotated[str, Field(description="the full text")]
) -> dict[str, Any]:
    try:
        real, size = ctx.services.files.write_text(path, content)
    except (OSError, ValueError) as exc:
        raise _refused(exc) from None
    return {"path": str(real), "bytes": size}


@tool(description="Send a file from the workspace to the user, attached to the reply.")
async def send_file(ctx: ToolContext, path: Path_) -> ToolResult:
    try:
        real, size = ctx.services.files.sendable(path)
    except (OSError, ValueError) as exc:
        raise _refused(exc) from None
    return ToolResult.success({"sent": str(real), "bytes": size}, files=(str(real),))
