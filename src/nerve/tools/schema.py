"""A tool's JSON schema, derived from its typed parameters with pydantic, never hand-written.

The parameters after `ctx` become a pydantic model (extra arguments forbidden); its JSON schema is
tidied for models: titles dropped, `X | None` shown as X (the parameter is simply not required),
descriptions taken from `Annotated[..., Field(description=...)]` or the docstring's `Args:`.
The same model validates the model's arguments, and its errors name the field.
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

__all__ = ["ArgumentError", "arguments_model", "describe_errors", "doc_summary", "json_schema"]

_ARG_LINE = re.compile(r"^\s{2,}(\w+)(?:\s*\([^)]*\))?\s*:\s*(.+)$")


class ArgumentError(ValueError):
    """The arguments do not fit the tool's schema; the message names the field."""


def doc_summary(fn: Callable[..., Any]) -> str:
    """The docstring up to `Args:` (or its end), whitespace-normalised."""
    doc = inspect.getdoc(fn) or ""
    return " ".join(doc.split("Args:")[0].split())


def _doc_args(fn: Callable[..., Any]) -> dict[str, str]:
    doc = inspect.getdoc(fn) or ""
    if "Args:" not in doc:
        return {}
    found: dict[str, str] = {}
    for line in doc.split("Args:", 1)[1].splitlines():
        if m := _ARG_LINE.match("  " + line):
            found[m.group(1)] = m.group(2).strip()
    return found


def takes_context(fn: Callable[..., Any]) -> bool:
    params = list(inspect.signature(fn).parameters.values())
    return bool(params) and params[0].name == "ctx"


def arguments_model(fn: Callable[..., Any], name: str) -> type[BaseModel]:
    """A pydantic model of `fn`'s parameters after `ctx`."""
    hints = typing.get_type_hints(fn, include_extras=True)
    params = list(inspect.signature(fn).parameters.values())
    if takes_context(fn):
        params = params[1:]
    fields: dict[str, Any] = {}
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.POSITIONAL_ONLY):
            raise TypeError(f"tool {name}: parameter {p.name!r} must be a named parameter")
        default = ... if p.default is inspect.Parameter.empty else p.default
        fields[p.name] = (hints.get(p.name, Any), default)
    config = ConfigDict(extra="forbid", arbitrary_types_allowed=False)
    model: type[BaseModel] = create_model(f"{name}_arguments", __config__=config, **fields)
    return model


def json_schema(model: type[BaseModel], fn: Callable[..., Any]) -> dict[str, Any]:
    schema: dict[str, Any] = _tidy(model.model_json_schema())
    schema.setdefault("properties", {})
    schema["type"] = "object"
    schema["additionalProperties"] = False
    for name, text in _doc_args(fn).items():
        prop = schema["properties"].get(name)
        if prop is not None and "description" not in prop:
            prop["description"] = text
    return schema


def _tidy(node: Any) -> Any:
    if isinstance(node, list):
        return [_tidy(x) for x in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title":
            continue
        if key in ("properties", "$defs"):  # keys here are names, not keywords
            out[key] = {k: _tidy(v) for k, v in value.items()}
        else:
            out[key] = _tidy(value)
    options = out.get("anyOf")
    if isinstance(options, list) and {"type": "null"} in options and len(options) == 2:
        out.pop("anyOf")
        out = {**next(o for o in options if o != {"type": "null"}), **out}
        if out.get("default", ...) is None:
            out.pop("default")
    return out


def describe_errors(error: ValidationError) -> str:
    """One line per problem, each naming its field, for the model to correct itself."""
    parts = []
    for e in error.errors(include_url=False):
        field = ".".join(str(x) for x in e["loc"]) or "arguments"
        if e["type"] == "missing":
            parts.append(f"'{field}' is required")
        elif e["type"] == "extra_forbidden":
            parts.append(f"'{field}' is not a parameter of this tool")
        else:
            parts.append(f"'{field}': {e['msg']} (got {e.get('input')!r:.80})")
    return "; ".join(parts)
