"""Fixtures for the tool tests: a workspace sandbox, a real SQLite-backed Memory, contexts.

workspace     the one allowed path (created); `outside` is a sibling holding a canary file
config        a Config whose assistant.files.allowed_paths is [workspace], storage in tmp
memory        an opened Memory built by build_memory(config) (SQLite + WAL), closed after
services      Services over all of it with an explicit, empty environ
context(u)    a ToolContext for user u
registry      every built-in tool, no plug-ins
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from nerve.config import Config
from nerve.memory import Memory, build_memory
from nerve.tools import Services, ToolContext, ToolRegistry, builtin_registry


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return path


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    path = tmp_path / "outside"
    path.mkdir()
    (path / "canary.txt").write_text("still here")
    return path


def make_config(workspace: Path, tmp_path: Path, **assistant: Any) -> Config:
    return Config.model_validate({
        "storage": {"url": f"sqlite:///{tmp_path / 'nerve.db'}"},
        "assistant": {"files": {"allowed_paths": [str(workspace)]}, **assistant},
    })  # fmt: skip


@pytest.fixture
def config(workspace: Path, tmp_path: Path) -> Config:
    return make_config(workspace, tmp_path)


@pytest.fixture
async def memory(config: Config) -> AsyncIterator[Memory]:
    mem = build_memory(config, environ={})
    await mem.open()
    yield mem
    await mem.close()


@pytest.fixture
def services(config: Config, memory: Memory) -> Services:
    return Services(memory=memory, config=config, environ={})


@pytest.fixture
def context(services: Services) -> Callable[..., ToolContext]:
    def make(user_id: str = "alice", **kw: Any) -> ToolContext:
        return ToolContext(user_id=user_id, channel="terminal", chat_id="c1",
                           conversation=f"terminal:{user_id}", services=services, **kw)  # fmt: skip

    return make


@pytest.fixture
def registry() -> ToolRegistry:
    return builtin_registry(plugins=False)
