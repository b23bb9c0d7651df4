"""`ToolRegistry`: where tools are found, rendered for the model, and THE chokepoint they pass.

    execute(name, arguments, ctx): unknown tool → JSON decode → schema validation (errors name the
    field) → safety check (SF-1..4, for tools that declare one) → run under a timeout, again
    after a crash or a timeout for tools with `retries` → ToolResult (with its `attempts`).

Everything nerve runs on behalf of a user passes here: the assistant's tool calls, MCP tools it
uses, and the pipeline's intent handlers (`/api/process`, `nerve process`, MCP `process` and
`safe_execute`), registered as hidden tools that no model is offered.

`execute` never raises (cancellation aside): every failure becomes a `ToolResult` the model reads.
Tools come from `register`, `discover(package)` (each module's top-level `Tool`s) and the
`nerve.tools` entry-point group (a `Tool`, an async function, or a module of tools).
"""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
import pkgutil
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import replace
from importlib.metadata import entry_points
from types import ModuleType
from typing import Any, Literal, cast

from nerve.safety import DEFAULT_SCOPE, Kind
from nerve.safety.record import record
from nerve.tools.base import Tool
from nerve.tools.result import ToolContext, ToolError, ToolResult
from nerve.tools.schema import ArgumentError

__all__ = ["ENTRY_POINT_GROUP", "ToolRegistry"]

log = logging.getLogger("nerve.tools")
ENTRY_POINT_GROUP = "nerve.tools"


class ToolRegistry:
    def __init__(self, tools: Iterable[Tool | Callable[..., Any]] = (), *, timeout: float = 60.0):
        self.timeout = timeout  # for tools that declare none
        self._tools: dict[str, Tool] = {}
        for t in tools:
            self.register(t)

    # -- contents --------------------------------------------------------------------------

    def register(self, tool_or_fn: Tool | Callable[..., Awaitable[Any]]) -> Tool:
        """Add a tool (a plain async function is wrapped); a later one of the same name wins."""
        made = tool_or_fn if isinstance(tool_or_fn, Tool) else Tool.from_function(tool_or_fn)
        self._tools[made.name] = made
        return made

    def unregister(self, name: str) -> bool:
        return self._tools.pop(name, None) is not None

    def discover(self, package: str | ModuleType) -> list[str]:
        """Register the top-level tools of every module in `package` (private ones skipped)."""
        pkg = importlib.import_module(package) if isinstance(package, str) else package
        found = self._from_module(pkg)
        for info in pkgutil.iter_modules(getattr(pkg, "__path__", [])):
            if not info.name.startswith("_"):
                found += self._from_module(importlib.import_module(f"{pkg.__name__}.{info.name}"))
        return found

    def _from_module(self, module: ModuleType) -> list[str]:
        tools = [v for v in vars(module).values() if isinstance(v, Tool)]
        return [self.register(t).name for t in tools]

    def load_entry_points(self, group: str = ENTRY_POINT_GROUP) -> list[str]:
        """Plug-ins: each entry point names a Tool, an async function or a module of tools.
        One that fails to load is logged and skipped; none replaces a tool already here."""
        loaded: list[str] = []
        for ep in entry_points(group=group):
            try:
                target = ep.load()
                if isinstance(target, ModuleType):
                    tools = [v for v in vars(target).values() if isinstance(v, Tool)]
                else:
                    tools = [target if isinstance(target, Tool) else Tool.from_function(target)]
            except Exception as exc:
                log.warning("tool plug-in %s (%s) not loaded: %s", ep.name, ep.value, exc)
                continue
            for t in tools:
                if t.name in self._tools:
                    log.warning("tool plug-in %s: %r is already registered; skipped", ep.name,
                                t.name)  # fmt: skip
                    continue
                loaded.append(self.register(t).name)
        return loaded

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        """The tools a model may be offered (hidden ones are not)."""
        return [n for n, t in self._tools.items() if not t.hidden]

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def schemas(
        self, fmt: Literal["openai", "anthropic"] = "openai", names: Iterable[str] | None = None
    ) -> list[dict[str, Any]]:
        """The tools' schemas in the provider's format; `names` picks (unknown ones skipped)."""
        chosen = [t for t in self._tools.values() if not t.hidden] if names is None else [
            self._tools[n] for n in dict.fromkeys(names) if n in self._tools
            and not self._tools[n].hidden
        ]  # fmt: skip
        if fmt == "openai":
            return [t.openai() for t in chosen]
        if fmt == "anthropic":
            return [t.anthropic() for t in chosen]
        raise ValueError(f"unknown schema format {fmt!r}: openai or anthropic")

    # -- the chokepoint --------------------------------------------------------------------

    async def execute(
        self, name: str, arguments: str | Mapping[str, Any] | None, ctx: ToolContext
    ) -> ToolResult:
        tool = self._tools.get(name)
        if tool is None:
            known = ", ".join(sorted(self.names())) or "none"
            return ToolResult.failure(f"unknown tool {name!r}; available tools: {known}")
        try:
            args = tool.validate(_decode(arguments))
        except ArgumentError as exc:
            return ToolResult.failure(f"invalid arguments for {name}: {exc}")
        if tool.safety is not None:
            blocked = await self._check(tool, args, ctx)
            if blocked is not None:
                return blocked
        for attempt in range(1, tool.retries + 2):
            result = await self._run(tool, args, ctx)
            if result.attempts == 0:  # a crash or a timeout: worth another attempt
                continue
            return replace(result, attempts=attempt) if attempt > 1 else result
        return replace(result, attempts=tool.retries + 1)

    async def _run(self, tool: Tool, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """One run; `attempts=0` marks a failure another attempt may mend (a crash, a timeout)."""
        limit = tool.timeout or self.timeout
        try:
            async with asyncio.timeout(limit):
                value = await tool.run(args, ctx)
        except TimeoutError:
            return replace(
                ToolResult.failure(f"{tool.name} timed out after {limit:g} s"), attempts=0
            )
        except (ToolError, ArgumentError) as exc:
            return ToolResult.failure(str(exc))
        except Exception as exc:
            log.warning("tool %s failed", tool.name, exc_info=True)
            failed = ToolResult.failure(f"{tool.name} failed: {type(exc).__name__}: {exc}")
            return replace(failed, attempts=0)
        return value if isinstance(value, ToolResult) else ToolResult.success(value)

    async def _check(self, tool: Tool, args: dict[str, Any], ctx: ToolContext) -> ToolResult | None:
        assert tool.safety is not None
        kind, field = tool.safety
        content = tool.name if field is None else args.get(field)
        if content is None:  # an optional argument left out: nothing to judge
            return None
        # Commands are judged against the workspace they run in: deleting inside it is fine.
        scope = ctx.services.files.scope() if kind in ("shell", "sql") else DEFAULT_SCOPE
        verdict = await ctx.services.safety.check(cast(Kind, kind), str(content), scope=scope)
        record(verdict, source="tools", check=kind, subject=f"{tool.name}: {content}")
        if verdict.allowed:
            return None
        return ToolResult.failure(
            f"blocked by safety: {verdict.reason}", content=verdict.to_dict(), blocked=True
        )


def _decode(arguments: str | Mapping[str, Any] | None) -> Mapping[str, Any]:
    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        return {}
    if isinstance(arguments, str):
        try:
            decoded = json.loads(arguments)
        except ValueError as exc:
            raise ArgumentError(f"arguments are not valid JSON ({exc})") from None
    else:
        decoded = arguments
    if not isinstance(decoded, Mapping):
        raise ArgumentError(f"arguments must be a JSON object, not {type(decoded).__name__}")
    return decoded
