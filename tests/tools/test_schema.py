"""AS-4: a tool's JSON schema is derived from its typed parameters and renders in both formats."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pytest
from pydantic import Field

from nerve.tools import Tool, ToolContext, ToolRegistry, tool


@tool(description="Save, list or delete short notes.")
async def notes(
    ctx: ToolContext,
    action: Literal["add", "list", "delete"],
    content: str | None = None,
    limit: Annotated[int, Field(ge=1, le=50, description="at most this many")] = 10,
) -> dict[str, Any]:
    return {"action": action, "content": content, "limit": limit}


async def documented(ctx: ToolContext, city: str, days: int = 1) -> str:
    """Forecast for a city.

    Args:
        city: the city's name
        days (int): how many days ahead
    """
    return f"{city}:{days}"


def test_the_schema_comes_from_the_signature_after_ctx() -> None:
    assert notes.name == "notes"
    assert notes.parameters == {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["add", "list", "delete"]},
            "content": {"type": "string"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10,
                      "description": "at most this many"},
        },
        "required": ["action"],
        "additionalProperties": False,
    }  # fmt: skip


def test_descriptions_come_from_the_docstring_when_not_annotated() -> None:
    made = Tool.from_function(documented)
    assert made.description == "Forecast for a city."
    props = made.parameters["properties"]
    assert props["city"]["description"] == "the city's name"
    assert props["days"]["description"] == "how many days ahead"
    assert made.parameters["required"] == ["city"]


def test_one_schema_renders_openai_and_anthropic_formats() -> None:
    assert notes.openai() == {
        "type": "function",
        "function": {"name": "notes", "description": notes.description,
                     "parameters": notes.parameters},
    }  # fmt: skip
    assert notes.anthropic() == {
        "name": "notes",
        "description": notes.description,
        "input_schema": notes.parameters,
    }
    reg = ToolRegistry([notes, documented])
    assert [s["function"]["name"] for s in reg.schemas("openai")] == ["notes", "documented"]
    chosen = reg.get("documented")
    assert chosen is not None
    assert reg.schemas("anthropic", names=["documented", "nope"]) == [chosen.anthropic()]


def test_a_tool_known_only_by_schema_renders_and_validates() -> None:
    async def call(args: dict[str, Any], ctx: ToolContext) -> Any:
        return args

    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    made = Tool.from_schema("remote_search", "Search elsewhere.", schema, call)
    assert made.openai()["function"]["parameters"] == schema
    assert made.validate({"q": "x"}) == {"q": "x"}
    with pytest.raises(ValueError, match="'q' is a required property"):
        made.validate({})


async def test_a_decorated_tool_is_still_callable_directly() -> None:
    assert await notes(ToolContext(user_id="u"), action="list") == {
        "action": "list", "content": None, "limit": 10,
    }  # fmt: skip


def test_bad_tool_definitions_fail_at_import_not_at_call() -> None:
    def sync(ctx: ToolContext, x: int) -> int:
        return x

    with pytest.raises(TypeError, match="async"):
        Tool.from_function(sync)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no parameter 'cmd'"):
        tool(safety=("shell", "cmd"))(documented)
    with pytest.raises(ValueError, match="safety kind"):
        tool(safety=("disk", None))(documented)
