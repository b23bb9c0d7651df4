"""MCP test fixtures: a started NerveApp and the SDK's own client connected to it in process.

mcp_config   the config the app is built from (override it in a test module)
nerve_app    a NerveApp whose lifespan ran (gateway, memory, agents open)
client       mcp.Client(nerve_app.mcp): the real SDK client, in process
call         call(name, **arguments) -> CallToolResult, through `client`
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, TypeVar

import pytest
from mcp import Client
from mcp_types import CallToolResult

from nerve.config import Config
from nerve.server import NerveApp, build_app
from tests.conftest import make_config
from tests.fakes.upstream import FakeUpstream

T = TypeVar("T")
Call = Callable[..., Awaitable[CallToolResult]]

ROUTES = [
    {
        "name": "code",
        "rules": [r"\b(debug|traceback|python|docker)\b"],
        "examples": ["why does this function throw KeyError", "write a dockerfile"],
        "model": {"provider": "primary", "model": "code-model"},
        "fallbacks": [{"provider": "primary", "model": "code-fallback"}],
    },
    {"name": "default", "model": {"provider": "primary", "model": "m1"}},
]


@pytest.fixture(autouse=True)
def _admin_password(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NERVE_ADMIN_PASSWORD", "mcp-tests-password")


@pytest.fixture
def mcp_config(upstream: FakeUpstream) -> Config:
    return make_config({"primary": upstream}, ROUTES)


@pytest.fixture
async def nerve_app(mcp_config: Config) -> AsyncIterator[NerveApp]:
    app = build_app(mcp_config)
    async with app.api.router.lifespan_context(app.api):
        yield app


@contextlib.asynccontextmanager
async def held(context: AbstractAsyncContextManager[T]) -> AsyncIterator[T]:
    """Enter and leave `context` in a task of its own.

    The SDK's clients hold anyio task groups, which must be left by the task that entered them;
    pytest-asyncio sets a fixture up and tears it down in different tasks.
    """
    entered: asyncio.Future[T] = asyncio.get_running_loop().create_future()
    stop = asyncio.Event()

    async def hold() -> None:
        async with context as value:
            entered.set_result(value)
            await stop.wait()

    task = asyncio.create_task(hold())
    await asyncio.wait({task, entered}, return_when=asyncio.FIRST_COMPLETED)
    if not entered.done():
        task.result()  # raises why it could not be entered
    try:
        yield entered.result()
    finally:
        stop.set()
        await task


@pytest.fixture
async def client(nerve_app: NerveApp) -> AsyncIterator[Client]:
    async with held(Client(nerve_app.mcp)) as connected:
        yield connected


@pytest.fixture
def call(client: Client) -> Call:
    async def call_tool(name: str, **arguments: Any) -> CallToolResult:
        return await client.call_tool(name, arguments)

    return call_tool


def text_of(result: CallToolResult) -> str:
    """The text of a result's first content block (an is_error result's message)."""
    block = result.content[0]
    assert block.type == "text"
    return block.text
