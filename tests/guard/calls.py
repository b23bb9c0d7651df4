"""What the guard tests build on: a guard over the real safety engine, and tool calls."""

from __future__ import annotations

from typing import Any

from nerve.config_sections import GuardConfig
from nerve.gateway.guard import Format, ToolGuard
from nerve.safety import SafetyEngine

JSON = dict[str, Any]
DANGER = {"command": "rm -rf ~"}
HARMLESS = {"command": "ls -la"}


def guard(mode: str = "block", **config: Any) -> ToolGuard:
    return ToolGuard(GuardConfig.model_validate({"tool_calls": mode, **config}), SafetyEngine())


def call(name: str, arguments: JSON | str, i: int = 0, *, prefix: str = "call") -> JSON:
    """An OpenAI-shaped tool call as the fake upstream takes it."""
    return {"id": f"{prefix}_{i}", "function": {"name": name, "arguments": arguments}}


async def run(g: ToolGuard, fmt: Format, stream: list[bytes]) -> tuple[list[list[bytes]], Any]:
    """What each feed of a `fmt` stream returned (then finish), and the filter."""
    flt = g.stream(fmt)
    outs = [await flt.feed(frame) for frame in stream]
    outs.append(flt.finish())
    return outs, flt


def joined(outs: list[list[bytes]]) -> bytes:
    return b"".join(b for out in outs for b in out)
