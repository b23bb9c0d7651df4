"""AS-3/AS-4: `ToolRegistry.execute` is the chokepoint: every failure comes back as data."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, Literal

import pytest

from nerve.tools import Tool, ToolContext, ToolError, ToolRegistry, ToolResult, tool

BUILTINS = {"memo", "task", "read_file", "write_file", "send_file", "shell", "web_search",
            "weather"}  # fmt: skip


@tool(description="Add two numbers.")
async def add(ctx: ToolContext, a: int, b: int, mode: Literal["sum", "concat"] = "sum") -> Any:
    return a + b if mode == "sum" else f"{a}{b}"


@tool(description="Always fails.")
async def broken(ctx: ToolContext) -> None:
    raise RuntimeError("the disk is on fire")


@tool(description="Fails politely.")
async def polite(ctx: ToolContext) -> None:
    raise ToolError("nothing to do today")


never = asyncio.Event()


@tool(description="Waits forever.", timeout=0.05)
async def stuck(ctx: ToolContext) -> None:
    await never.wait()


@tool(description="Drops every table.", safety=("action", None))
async def drop_all_tables(ctx: ToolContext) -> str:
    raise AssertionError("a blocked tool must never run")


@pytest.fixture
def reg() -> ToolRegistry:
    return ToolRegistry([add, broken, polite, stuck, drop_all_tables])


@pytest.fixture
def ctx() -> ToolContext:
    return ToolContext(user_id="u")


async def test_valid_arguments_run_the_tool_from_json_text_or_a_dict(reg, ctx) -> None:
    assert await reg.execute("add", '{"a": 2, "b": 3}', ctx) == ToolResult(True, 5)
    result = await reg.execute("add", {"a": 2, "b": 3, "mode": "concat"}, ctx)
    assert result.ok and result.content == "23" and result.for_model() == '"23"'


async def test_an_unknown_tool_is_an_error_listing_the_known_ones(reg, ctx) -> None:
    result = await reg.execute("nope", "{}", ctx)
    assert not result.ok and "unknown tool 'nope'" in (result.error or "")
    assert "add" in (result.error or "")


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ('{"a": 1', "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        ('{"a": 1}', "'b' is required"),
        ('{"a": 1, "b": "two"}', "'b': Input should be a valid integer"),
        ('{"a": 1, "b": 2, "mode": "product"}', "'mode': Input should be 'sum' or 'concat'"),
        ('{"a": 1, "b": 2, "c": 3}', "'c' is not a parameter of this tool"),
    ],
)
async def test_schema_violations_come_back_as_data_naming_the_field(
    reg, ctx, arguments: str, expected: str
) -> None:
    result = await reg.execute("add", arguments, ctx)
    assert not result.ok and not result.blocked
    assert expected in (result.error or "")
    assert json.loads(result.for_model())["error"].startswith("invalid arguments for add")


async def test_exceptions_and_timeouts_become_error_results(reg, ctx) -> None:
    failed = await reg.execute("broken", None, ctx)
    assert failed.error == "broken failed: RuntimeError: the disk is on fire"
    assert (await reg.execute("polite", "", ctx)).error == "nothing to do today"
    timed = await reg.execute("stuck", "{}", ctx)
    assert timed.error == "stuck timed out after 0.05 s"


async def test_a_tool_declaring_safety_is_checked_before_it_runs(reg, ctx) -> None:
    result = await reg.execute("drop_all_tables", "{}", ctx)
    assert result.blocked and not result.ok
    assert result.content["allowed"] is False and result.content["blocked_by"] == "rule"
    assert (result.error or "").startswith("blocked by safety: ")
    body = json.loads(result.for_model())
    assert body["blocked"] is True and body["details"]["risk_level"] in ("high", "critical")


async def test_schema_only_tools_are_validated_with_their_json_schema(ctx) -> None:
    seen: list[dict[str, Any]] = []

    async def call(args: dict[str, Any], c: ToolContext) -> Any:
        seen.append(args)
        return {"is_error": False}

    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    reg = ToolRegistry([Tool.from_schema("remote", "Remote tool.", schema, call)])
    bad = await reg.execute("remote", '{"n": "x"}', ctx)
    assert "'n': 'x' is not of type 'integer'" in (bad.error or "") and seen == []
    assert (await reg.execute("remote", '{"n": 4}', ctx)).ok and seen == [{"n": 4}]


def test_register_unregister_and_last_registration_wins(reg) -> None:
    assert reg.unregister("broken") and not reg.unregister("broken")
    replacement = Tool.from_function(add.fn, name="add", description="New add.")  # type: ignore[arg-type]
    reg.register(replacement)
    assert reg.get("add") is replacement and "broken" not in reg


def test_discover_finds_every_built_in_tool() -> None:
    reg = ToolRegistry()
    assert set(reg.discover("nerve.tools.builtin")) >= BUILTINS
    assert len(reg.schemas("openai")) == len(reg)


def test_plug_ins_load_from_the_entry_point_group(tmp_path: Path, monkeypatch) -> None:
    """A real distribution on sys.path declares `nerve.tools` entry points (no mocking)."""
    (tmp_path / "nerve_plugin_demo.py").write_text(
        "from nerve.tools import tool\n"
        "@tool(description='Say hello.')\n"
        "async def hello(ctx, name: str) -> str:\n"
        "    return 'hello ' + name\n"
        "async def shout(ctx, text: str) -> str:\n"
        "    '''Shout the text.'''\n"
        "    return text.upper()\n"
        "@tool(name='memo', description='Not the real memo.')\n"
        "async def fake_memo(ctx) -> str:\n"
        "    return 'x'\n"
    )
    info = tmp_path / "nerve_plugin_demo-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: nerve-plugin-demo\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[nerve.tools]\nhello = nerve_plugin_demo:hello\nshout = nerve_plugin_demo:shout\n"
        "memo = nerve_plugin_demo:fake_memo\nbad = nerve_plugin_demo:missing\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    reg = ToolRegistry()
    reg.discover("nerve.tools.builtin")
    loaded = reg.load_entry_points()
    assert sorted(loaded) == [
        "hello",
        "shout",
    ]  # a plug-in never shadows a built-in; `bad` is skipped
    shout = reg.get("shout")
    assert shout is not None and shout.description == "Shout the text."
    assert reg.get("memo") is not None and reg.get("memo").description.startswith("Save")  # type: ignore[union-attr]


async def test_a_tool_with_retries_runs_again_after_a_crash_or_a_timeout(ctx) -> None:
    runs: list[int] = []

    @tool(description="Fails twice, then works.", retries=2)
    async def flaky(ctx: ToolContext) -> str:
        runs.append(1)
        if len(runs) < 3:
            raise ConnectionError("transient")
        return "done"

    @tool(description="Always stuck.", timeout=0.01, retries=1)
    async def hangs(ctx: ToolContext) -> None:
        await asyncio.Event().wait()

    reg = ToolRegistry([flaky, hangs])
    assert await reg.execute("flaky", {}, ctx) == ToolResult(True, "done", attempts=3)
    timed_out = await reg.execute("hangs", {}, ctx)
    assert not timed_out.ok and timed_out.attempts == 2 and "timed out" in (timed_out.error or "")


async def test_a_polite_failure_is_never_retried(ctx) -> None:
    runs: list[int] = []

    @tool(description="Says no.", retries=3)
    async def refuses(ctx: ToolContext) -> None:
        runs.append(1)
        raise ToolError("no")

    result = await ToolRegistry([refuses]).execute("refuses", {}, ctx)
    assert (result.ok, result.error, result.attempts, len(runs)) == (False, "no", 1, 1)
    with pytest.raises(ValueError, match="retries"):
        tool(retries=-1)(refuses.fn)  # type: ignore[arg-type]


async def test_a_hidden_tool_runs_but_is_offered_to_no_model(ctx) -> None:
    async def call(args: dict[str, Any], ctx: ToolContext) -> str:
        return "ran"

    inner = Tool.from_schema("inner", "Only nerve runs it.", {"type": "object"}, call, hidden=True)
    reg = ToolRegistry([add, inner])
    assert reg.names() == ["add"] and "inner" in reg
    assert [s["function"]["name"] for s in reg.schemas()] == ["add"]
    assert reg.schemas(names=["inner", "add"])[0]["function"]["name"] == "add"
    assert len(reg.schemas(names=["inner"])) == 0
    assert await reg.execute("inner", {}, ctx) == ToolResult(True, "ran")
    unknown = await reg.execute("nope", {}, ctx)
    assert unknown.error == "unknown tool 'nope'; available tools: add"
