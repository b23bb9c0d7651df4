"""The attributes of nerve's own spans (`@traced`): the safety verdict, memory, MCP tool calls.

Each describer takes the call's arguments, its result (None when it raised) and `capture`
(telemetry.capture_content), and reads them by shape: this package sits below the ones it
describes. Text (a judged command, a query, tool arguments) only goes out with `capture`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import orjson

__all__ = ["Describe", "recalled", "stored", "tool_called", "tool_served", "verdict"]

Describe = Callable[[Mapping[str, Any], Any, bool], Mapping[str, Any]]
Attributes = dict[str, Any]


def verdict(arguments: Mapping[str, Any], result: Any, capture: bool) -> Attributes:
    """`SafetyEngine.check(kind, content, intent=...)` → its Verdict."""
    out: Attributes = {"nerve.safety.kind": str(arguments.get("kind"))}
    if isinstance(arguments.get("intent"), str):
        out["nerve.safety.intent"] = arguments["intent"]
    if capture and isinstance(arguments.get("content"), str):
        out["nerve.safety.content"] = arguments["content"]
    if result is not None:
        out["nerve.safety.allowed"] = bool(getattr(result, "allowed", False))
        out["nerve.safety.risk"] = str(getattr(result, "risk_level", ""))
        if capture and isinstance(getattr(result, "reason", None), str):
            out["nerve.safety.reason"] = result.reason  # it may quote the content
        for field in ("blocked_by", "category"):
            value = getattr(result, field, None)
            if isinstance(value, str):
                out[f"nerve.safety.{field}"] = value
    return out


def recalled(arguments: Mapping[str, Any], result: Any, capture: bool) -> Attributes:
    """`Memory.recall(user_id, query=..., tier=..., limit=...)` → the records found."""
    out = _filters(arguments, ("tier", "kind", "intent", "limit"))
    out["nerve.memory.search"] = bool(arguments.get("query"))
    if capture and isinstance(arguments.get("query"), str):
        out["nerve.memory.query"] = arguments["query"]
    if isinstance(result, list):
        out["nerve.memory.recalled"] = len(result)
    return out


def stored(arguments: Mapping[str, Any], result: Any, capture: bool) -> Attributes:
    """`Memory.store_memory(user_id, tier=..., kind=..., ...)` → Stored."""
    out = _filters(arguments, ("tier", "kind", "intent"))
    if result is not None:
        out["nerve.memory.stored"] = bool(getattr(result, "stored", False))
    return out


def tool_served(arguments: Mapping[str, Any], result: Any, capture: bool) -> Attributes:
    """`NerveMCP.call_tool(name, arguments)` → a CallToolResult (is_error) or a raise."""
    out = _tool(str(arguments.get("name")), arguments.get("arguments"), capture)
    if result is not None and getattr(result, "is_error", False):
        out["error.type"] = "tool_error"
    return out


def tool_called(arguments: Mapping[str, Any], result: Any, capture: bool) -> Attributes:
    """`McpClients.call(server, tool, arguments)` → a ToolResult (never raises)."""
    out = _tool(str(arguments.get("tool")), arguments.get("arguments"), capture)
    out["nerve.mcp.server"] = str(arguments.get("server"))
    if result is not None and not getattr(result, "ok", True):
        out["error.type"] = "tool_error"
        if capture:
            out["gen_ai.tool.call.result"] = str(getattr(result, "error", ""))
    elif capture and result is not None:
        out["gen_ai.tool.call.result"] = _json(getattr(result, "content", None))
    return out


def _tool(name: str, arguments: Any, capture: bool) -> Attributes:
    out: Attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
                       "gen_ai.tool.type": "function"}  # fmt: skip
    if capture and arguments is not None:
        out["gen_ai.tool.call.arguments"] = _json(arguments)
    return out


def _filters(arguments: Mapping[str, Any], names: tuple[str, ...]) -> Attributes:
    out: Attributes = {}
    for name in names:
        value = arguments.get(name)
        if isinstance(value, str | int) and not isinstance(value, bool):
            out[f"nerve.memory.{name}"] = value
    return out


def _json(value: Any) -> str:
    return orjson.dumps(value, default=str).decode()
