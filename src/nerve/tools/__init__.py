"""Tools (AS-4): typed async functions the assistant's model may call, and the chokepoint they pass.

    @tool(description=...)          a function → `Tool` (schema derived from its typed parameters)
    ToolRegistry                    register / discover / load_entry_points / schemas / execute
    ToolContext, Services           who asks, and the injected dependencies (memory, safety, ...)
    ToolResult                      what the model reads back; failures are data, never raised
    FileSandbox                     `assistant.files.allowed_paths`, symlinks and `..` resolved

To add a built-in tool, write one module in `nerve.tools.builtin` with a top-level `@tool`
function: `discover("nerve.tools.builtin")` finds it. A plug-in names its tool (or a module of
tools) in the `nerve.tools` entry-point group. Tools never import the assistant.
"""

from nerve.tools.base import Tool, tool
from nerve.tools.files import FileSandbox, PathNotAllowed
from nerve.tools.registry import ENTRY_POINT_GROUP, ToolRegistry
from nerve.tools.result import Services, ToolContext, ToolError, ToolResult

__all__ = [
    "ENTRY_POINT_GROUP",
    "FileSandbox",
    "PathNotAllowed",
    "Services",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolRegistry",
    "ToolResult",
    "builtin_registry",
    "tool",
]


def builtin_registry(*, plugins: bool = True) -> ToolRegistry:
    """A registry with every built-in tool, and the installed plug-ins unless `plugins=False`."""
    registry = ToolRegistry()
    registry.discover("nerve.tools.builtin")
    if plugins:
        registry.load_entry_points()
    return registry
