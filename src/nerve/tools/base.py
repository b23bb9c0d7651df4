"""`Tool` and the `@tool` decorator: a typed async function, or a schema plus a callable (MCP).

    @tool(description="Look something up.", safety=("shell", "command"))
    async def shell(ctx: ToolContext, command: str, timeout_seconds: float = 30) -> dict: ...

The schema is derived from the parameters after `ctx` (see `schema`); `safety` names what the
chokepoint checks before the tool runs: (kind, argument) with kind shell, sql, text or action,
the argument None meaning the tool's own name (for action). One schema renders both formats.
`retries` runs a tool again after it raised or timed out (never after a ToolError, bad
arguments or a block). A `hidden` tool is run only by nerve itself (the pipeline's intent
handlers): it is never offered to a model.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, overload

import jsonschema
from pydantic import BaseModel, ValidationError

from nerve.tools.result import ToolContext
from nerve.tools.schema import (
    ArgumentError,
    arguments_model,
    describe_errors,
    doc_summary,
    json_schema,
    takes_context,
)

__all__ = ["SAFETY_KINDS", "Call", "Safety", "Tool", "tool"]

Call = Callable[[dict[str, Any], ToolContext], Awaitable[Any]]
Safety = tuple[str, str | None]
SAFETY_KINDS = ("shell", "sql", "text", "action")


class Tool:
    """One tool: name, description, JSON schema, how to validate and run it."""

    def __init__(
        self,
        name: str,
        description: str,
        parameters: Mapping[str, Any],
        call: Call,
        *,
        safety: Safety | None = None,
        timeout: float | None = None,
        retries: int = 0,
        hidden: bool = False,
        model: type[BaseModel] | None = None,
    ) -> None:
        if not name or not name.replace("_", "").replace("-", "").isalnum():
            raise ValueError(f"tool name {name!r}: letters, digits, _ and - only")
        if safety is not None and safety[0] not in SAFETY_KINDS:
            raise ValueError(f"tool {name}: safety kind must be one of {SAFETY_KINDS}")
        if retries < 0 or (timeout is not None and timeout <= 0):
            raise ValueError(f"tool {name}: retries must be >= 0 and the timeout > 0")
        self.name = name
        self.description = description
        self.parameters = dict(parameters)
        self.safety = safety
        self.timeout = timeout
        self.retries = retries
        self.hidden = hidden
        self._call = call
        self._model = model
        self._validator = None if model else jsonschema.Draft202012Validator(self.parameters)

    @classmethod
    def from_schema(
        cls,
        name: str,
        description: str,
        parameters: Mapping[str, Any],
        call: Call,
        safety: Safety | None = None,
        *,
        timeout: float | None = None,
        retries: int = 0,
        hidden: bool = False,
    ) -> Tool:
        """A tool known only by its JSON schema (an MCP server's): validated with jsonschema."""
        return cls(name, description, parameters, call, safety=safety, timeout=timeout,
                   retries=retries, hidden=hidden)  # fmt: skip

    @classmethod
    def from_function(
        cls,
        fn: Callable[..., Awaitable[Any]],
        *,
        name: str | None = None,
        description: str | None = None,
        safety: Safety | None = None,
        timeout: float | None = None,
        retries: int = 0,
    ) -> Tool:
        if not inspect.iscoroutinefunction(fn):
            raise TypeError(f"tool {fn.__name__}: must be an async function")
        tool_name = name or fn.__name__
        model = arguments_model(fn, tool_name)
        if safety is not None and safety[1] is not None and safety[1] not in model.model_fields:
            raise ValueError(f"tool {tool_name}: safety names no parameter {safety[1]!r}")
        with_ctx = takes_context(fn)

        async def call(args: dict[str, Any], ctx: ToolContext) -> Any:
            return await (fn(ctx, **args) if with_ctx else fn(**args))

        text = description or doc_summary(fn)
        made = cls(tool_name, text, json_schema(model, fn), call, safety=safety, timeout=timeout,
                   retries=retries, model=model)  # fmt: skip
        made.__doc__ = fn.__doc__
        made.fn = fn
        return made

    fn: Callable[..., Awaitable[Any]] | None = None  # the decorated function, if any

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments checked against the schema, or ArgumentError naming the field."""
        if self._model is not None:
            try:
                parsed = self._model.model_validate(dict(arguments))
            except ValidationError as exc:
                raise ArgumentError(describe_errors(exc)) from None
            return {k: getattr(parsed, k) for k in type(parsed).model_fields}
        assert self._validator is not None
        errors = sorted(self._validator.iter_errors(dict(arguments)), key=lambda e: e.path)
        if errors:
            raise ArgumentError("; ".join(_jsonschema_error(e) for e in errors[:5]))
        return dict(arguments)

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> Any:
        """Run with already-validated arguments (the registry's `execute` validates first)."""
        return await self._call(arguments, ctx)

    async def __call__(self, ctx: ToolContext, **arguments: Any) -> Any:
        return await self._call(arguments, ctx)

    def openai(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }

    def anthropic(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "input_schema": self.parameters}

    def __repr__(self) -> str:
        return f"Tool({self.name!r})"


def _jsonschema_error(error: jsonschema.ValidationError) -> str:
    field = ".".join(str(p) for p in error.path)
    return f"'{field}': {error.message}" if field else error.message


@overload
def tool(fn: Callable[..., Awaitable[Any]], /) -> Tool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    safety: Safety | None = None,
    timeout: float | None = None,
    retries: int = 0,
) -> Callable[[Callable[..., Awaitable[Any]]], Tool]: ...


def tool(
    fn: Callable[..., Awaitable[Any]] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    safety: Safety | None = None,
    timeout: float | None = None,
    retries: int = 0,
) -> Tool | Callable[[Callable[..., Awaitable[Any]]], Tool]:
    """`@tool` or `@tool(name=..., description=..., safety=..., timeout=..., retries=...)`."""

    def wrap(f: Callable[..., Awaitable[Any]]) -> Tool:
        return Tool.from_function(
            f, name=name, description=description, safety=safety, timeout=timeout, retries=retries
        )

    return wrap(fn) if fn is not None else wrap
