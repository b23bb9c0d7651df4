"""SPEC PR-3: `nerve mcp --config FILE` serves the tools over stdio to the SDK's own client;
stdout carries only the protocol, logs go to stderr."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import orjson
import yaml
from mcp import ClientSession, StdioServerParameters, stdio_client

from nerve.mcp import TOOL_NAMES
from tests.fakes.upstream import FakeUpstream
from tests.mcp.conftest import text_of

TIMEOUT = 60


def write_config(tmp_path: Path, upstream: FakeUpstream, **extra: Any) -> Path:
    path = tmp_path / "nerve.yaml"
    config = {
        "providers": [{"name": "primary", "protocol": "openai",
                       "base_url": upstream.openai_base_url, "api_key": "sk-test"}],
        "routes": [{"name": "default", "model": {"provider": "primary", "model": "m1"}}],
        "probes": {"interval_seconds": 0}, **extra,
    }  # fmt: skip
    path.write_text(yaml.safe_dump(config))
    return path


def nerve_mcp(config: Path, cwd: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "nerve", "mcp", "--config", str(config), "--log-level", "info"],
        env={"NERVE_ADMIN_PASSWORD": "stdio-tests"},
        cwd=cwd,
    )


async def test_the_sdk_client_lists_and_calls_tools_over_stdio(
    tmp_path: Path, upstream: FakeUpstream
) -> None:
    config = write_config(tmp_path, upstream)
    errors = tmp_path / "stderr.log"
    with errors.open("w") as errlog:
        async with (
            asyncio.timeout(TIMEOUT),
            stdio_client(nerve_mcp(config, tmp_path), errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            names = {tool.name for tool in (await session.list_tools()).tools}
            blocked = await session.call_tool(
                "check_safety", {"kind": "shell", "content": "rm -rf /"}
            )
            stored = await session.call_tool("store_memory", {
                "user_id": "asha", "intent": "preference", "tier": "semantic",
                "data": {"text": "likes filter coffee"}, "importance_score": 0.9})  # fmt: skip
            recalled = await session.call_tool(
                "recall_memory", {"user_id": "asha", "query": "coffee"}
            )
            bad = await session.call_tool("recall_memory", {"user_id": "asha", "limit": "many"})
            answered = await session.call_tool("reason", {"prompt": "hello"})
    assert names == set(TOOL_NAMES)
    assert blocked.structured_content is not None
    assert blocked.structured_content["allowed"] is False
    assert stored.structured_content is not None and stored.structured_content["stored"] is True
    assert recalled.structured_content is not None
    assert recalled.structured_content["records"][0]["data"] == {"text": "likes filter coffee"}
    assert bad.is_error and "'limit'" in text_of(bad)
    assert answered.structured_content is not None
    assert answered.structured_content["answer"] == "Hello from fake"
    assert "nerve MCP server on stdio" in errors.read_text()  # logs went to stderr


async def test_stdout_carries_only_json_rpc_messages(
    tmp_path: Path, upstream: FakeUpstream
) -> None:
    """Raw: every line nerve writes to stdout is a JSON-RPC message, even with logging at info
    and a model call (whose logs and warnings must land on stderr)."""
    config = write_config(tmp_path, upstream)
    params = nerve_mcp(config, tmp_path)
    requests: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "process", "arguments": {"text": "explain rivers", "execute": True}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "check_safety", "arguments": {"kind": "sql"}}},
    ]  # fmt: skip
    process = await asyncio.create_subprocess_exec(
        params.command, *params.args, cwd=params.cwd, env={**os.environ, **(params.env or {})},
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    answers: dict[int, dict[str, Any]] = {}
    lines: list[bytes] = []
    async with asyncio.timeout(TIMEOUT):
        for request in requests:
            process.stdin.write(orjson.dumps(request) + b"\n")
            await process.stdin.drain()
            if "id" not in request:
                continue
            while request["id"] not in answers:  # answers, and whatever else comes first
                line = await process.stdout.readline()
                assert line, "nerve mcp closed stdout"
                lines.append(line)
                message = orjson.loads(line)
                if "id" in message:
                    answers[message["id"]] = message
        process.stdin.close()
        rest, stderr = await process.communicate()
    assert process.returncode == 0, stderr.decode()
    lines += rest.splitlines(keepends=True)
    for line in lines:
        assert orjson.loads(line)["jsonrpc"] == "2.0", line
    assert answers[2]["result"]["structuredContent"]["execution"]["status"] == "ok"
    assert answers[3]["result"]["isError"] is True
    assert "'content': Field required" in answers[3]["result"]["content"][0]["text"]
    assert b"nerve MCP server on stdio" in stderr


async def test_over_stdio_there_is_no_key_so_the_users_limits_of_keys_do_not_apply(
    tmp_path: Path, upstream: FakeUpstream
) -> None:
    """Whoever can start `nerve mcp` owns the machine's store: LOCAL, like the CLI."""
    keys = [{"name": "bot", "key": "sk-bot-only-ci-bot", "users": ["ci-bot"]}]
    config = write_config(tmp_path, upstream, server={"api_keys": keys})
    async with (
        asyncio.timeout(TIMEOUT),
        stdio_client(nerve_mcp(config, tmp_path), errlog=sys.stderr) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        stored = await session.call_tool("store_memory", {
            "user_id": "asha", "intent": "preference", "tier": "semantic",
            "data": {"text": "likes filter coffee"}, "importance_score": 0.9})  # fmt: skip
    assert not stored.is_error, text_of(stored)
