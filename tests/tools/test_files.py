"""AS-4: read_file, write_file and send_file stay inside assistant.files.allowed_paths."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest


async def test_write_then_read_round_trips_inside_the_workspace(
    registry, context, workspace: Path
) -> None:
    wrote = await registry.execute(
        "write_file", {"path": "notes/today.txt", "content": "buy milk"}, context()
    )
    assert wrote.ok, wrote
    assert (workspace / "notes" / "today.txt").read_text() == "buy milk"
    read = await registry.execute("read_file", '{"path": "notes/today.txt"}', context())
    assert read.ok and read.content["content"] == "buy milk" and not read.content["truncated"]
    absolute = await registry.execute("read_file", {"path": str(workspace / "notes/today.txt")},
                                      context())  # fmt: skip
    assert absolute.ok and absolute.content["content"] == "buy milk"


OUTSIDE = [
    "../outside/canary.txt",
    "{outside}/canary.txt",
    "link/canary.txt",
    "/etc/passwd",
    "~/.bashrc",
    "sub/../../outside/canary.txt",
]


@pytest.mark.parametrize("tool", ["read_file", "write_file", "send_file"])
@pytest.mark.parametrize("where", OUTSIDE)
async def test_paths_leaving_the_workspace_are_refused(
    registry, context, workspace: Path, outside: Path, tool: str, where: str
) -> None:
    os.symlink(outside, workspace / "link")
    path = where.format(outside=outside)
    args = {"path": path} | ({"content": "pwned"} if tool == "write_file" else {})
    result = await registry.execute(tool, args, context())
    assert not result.ok and result.files == ()
    assert (result.error or "").startswith(f"path is not allowed: {path} (allowed: {workspace}")
    assert "path is not allowed" in json.loads(result.for_model())["error"]
    assert (outside / "canary.txt").read_text() == "still here"


async def test_a_symlinked_file_pointing_out_is_refused_too(
    registry, context, workspace: Path, outside: Path
) -> None:
    os.symlink(outside / "canary.txt", workspace / "innocent.txt")
    for tool in ("read_file", "write_file"):
        args = {"path": "innocent.txt", "content": "x"} if tool == "write_file" else {
            "path": "innocent.txt"}  # fmt: skip
        result = await registry.execute(tool, args, context())
        assert not result.ok and "path is not allowed: innocent.txt" in (result.error or "")
    assert (outside / "canary.txt").read_text() == "still here"


async def test_send_file_names_the_file_for_the_channel(registry, context, workspace: Path) -> None:
    (workspace / "report.txt").write_text("numbers")
    result = await registry.execute("send_file", {"path": "report.txt"}, context())
    assert result.ok and result.files == (str(workspace / "report.txt"),)
    assert result.content == {"sent": str(workspace / "report.txt"), "bytes": 7}


async def test_missing_files_and_size_caps_are_errors_not_crashes(
    registry, context, services, workspace: Path
) -> None:
    missing = await registry.execute("read_file", {"path": "nope.txt"}, context())
    assert missing.error == "no such file: nope.txt"
    services.files.max_write_bytes = 10
    big = await registry.execute("write_file", {"path": "big.txt", "content": "x" * 11}, context())
    assert big.error == "content is 11 bytes; the limit is 10"
    services.files.max_read_bytes = 4
    (workspace / "long.txt").write_text("abcdefgh")
    cut = await registry.execute("read_file", {"path": "long.txt"}, context())
    assert cut.content["content"] == "abcd" and cut.content["truncated"] is True
