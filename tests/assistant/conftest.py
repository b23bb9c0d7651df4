"""Assistant fixtures: a NerveApp whose lifespan ran (real gateway in front of the fake upstream,
real SQLite memory in the test's directory) and an `Assistant` wired to it as `nerve` wires it.

assistant_settings  dict merged into the config's `assistant:` section (override per module)
nerve_app           the started app
make                make(tools=..., services=...) -> Assistant over nerve_app
ask_once            ask_once(assistant, text, user="asha") -> Outbound
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from nerve.assistant import Assistant, Inbound, Outbound
from nerve.assistant.build import assistant_from_app
from nerve.server import NerveApp, build_app
from nerve.tools import ToolRegistry
from nerve.tools.result import Services
from tests.conftest import make_config
from tests.fakes.upstream import FakeUpstream

Make = Callable[..., Assistant]


@pytest.fixture(autouse=True)
def _admin_password(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NERVE_ADMIN_PASSWORD", "assistant-tests-password")


@pytest.fixture
def assistant_settings() -> dict[str, Any]:
    return {}


@pytest.fixture
async def nerve_app(
    upstream: FakeUpstream, assistant_settings: dict[str, Any]
) -> AsyncIterator[NerveApp]:
    config = make_config(
        {"primary": upstream},
        assistant=assistant_settings,
        probes={"interval_seconds": 0},
        server={"config_poll_seconds": 0},
    )
    app = build_app(config)
    async with app.api.router.lifespan_context(app.api):
        yield app


@pytest.fixture
def make(nerve_app: NerveApp) -> Make:
    def build(tools: ToolRegistry | None = None, services: Services | None = None) -> Assistant:
        return assistant_from_app(
            nerve_app, tools=tools if tools is not None else ToolRegistry(), services=services
        )

    return build


async def ask(assistant: Assistant, text: str, *, user: str = "asha", chat: str = "c1") -> Outbound:
    return await assistant.reply(Inbound("test", chat, user, text))


@pytest.fixture
def ask_once() -> Callable[..., Awaitable[Outbound]]:
    return ask


def call(name: str, arguments: dict[str, Any] | str, ident: str = "call_1") -> dict[str, Any]:
    """One OpenAI tool call as the fake upstream's `Reply(tool_calls=[...])` takes it."""
    return {"id": ident, "type": "function", "function": {"name": name, "arguments": arguments}}


def tool_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] == "tool"]
