"""Wiring the assistant to a running NerveApp: the gateway as its model, memory, the tools.

`assistant_from_app(app)` takes an `App` (what it uses of NerveApp: the config, the gateway,
the pipeline's safety engine, memory and the one tool registry) after its lifespan started
(memory open, gateway open). The model
is reached through `Gateway.complete` in process: no HTTP to itself, and the gateway's routing,
fallbacks, breakers and stats apply to every assistant call.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, Protocol

import aiohttp
import orjson

from nerve.assistant.agent import Assistant
from nerve.assistant.loop import ChatFn
from nerve.assistant.streaming import gateway_stream_ask
from nerve.config import Config
from nerve.errors import NerveError, UpstreamError
from nerve.gateway.app import GatewayState
from nerve.gateway.core import Gateway
from nerve.memory import Memory
from nerve.pipeline import Pipeline
from nerve.tools import ToolRegistry
from nerve.tools.result import Services

__all__ = ["App", "assistant_from_app", "gateway_ask", "memory_of"]


class App(Protocol):
    """What the assistant uses of a running nerve (`nerve.server.NerveApp` is one)."""

    @property
    def config(self) -> Config: ...
    @property
    def gateway(self) -> GatewayState: ...
    @property
    def pipeline(self) -> Pipeline: ...
    @property
    def memory(self) -> Memory: ...  # raises NerveError when memory.enabled is false
    @property
    def tools(self) -> ToolRegistry: ...


def gateway_ask(get_gateway: Callable[[], Gateway]) -> ChatFn:
    """`ask(body) -> completion dict` through the gateway (looked up per call: reloads swap it)."""

    async def ask(body: dict[str, Any]) -> dict[str, Any]:
        completion, _served = await get_gateway().complete(dict(body))
        try:
            answer = orjson.loads(completion.body)
        except orjson.JSONDecodeError:
            raise UpstreamError("the answer is not JSON", code="upstream_bad_json") from None
        if not isinstance(answer, dict):
            raise UpstreamError("the answer is not a JSON object", code="upstream_bad_json")
        return answer

    return ask


def memory_of(app: App) -> Memory | None:
    try:
        return app.memory
    except NerveError:  # memory.enabled: false
        return None


def assistant_from_app(
    app: App,
    *,
    tools: ToolRegistry | None = None,
    services: Services | None = None,
    http: aiohttp.ClientSession | None = None,
) -> Assistant:
    memory = memory_of(app)
    if services is None:
        services = Services(
            memory=memory, safety=app.pipeline.safety, config=app.config, http=http,
            environ=os.environ,
        )  # fmt: skip
    return Assistant(
        app.config,
        ask=gateway_ask(lambda: app.gateway.gateway),
        ask_stream=gateway_stream_ask(lambda: app.gateway.gateway),
        memory=memory,
        tools=tools if tools is not None else app.tools,
        services=services,
    )
