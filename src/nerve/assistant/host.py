"""The assistant inside a running NerveApp: its bus, MCP clients, jobs and agent loop (AS-1..8).

    host = AssistantHost(app, channels={"web"})   # the channels this process serves
    await host.open()        # after the app's gateway and memory are open
    host.bus, host.agent     # what channels talk to
    await host.reload(config)  # the MCP server list follows the config file
    await host.close()

The scheduler delivers only through the channels attached to the host's bus, and only to chats
they reach now: a `nerve serve` without Discord leaves Discord reminders to `nerve discord`, and
a replica without a chat's socket leaves that chat's to the replica the tab is connected to.
A host with no channels (`nerve mcp`) starts nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Collection
from pathlib import Path

from nerve.assistant.agent import Assistant
from nerve.assistant.build import App, assistant_from_app, gateway_ask, memory_of
from nerve.assistant.bus import Bus
from nerve.assistant.jobs.mail import gateway_summarizer
from nerve.assistant.jobs.runtime import Jobs
from nerve.config import Config
from nerve.mcp.client import McpClients
from nerve.tools.result import Services

__all__ = ["AssistantHost"]


class AssistantHost:
    def __init__(
        self, app: App, *, channels: Collection[str], config_dir: Path | None = None
    ) -> None:
        self.app = app
        self.channels = frozenset(channels)
        self.bus = Bus()
        self.mcp = McpClients(app.config.assistant.mcp_servers, cwd=config_dir)
        self.jobs: Jobs | None = None
        self.agent: Assistant | None = None
        self._serving: asyncio.Task[None] | None = None

    @property
    def enabled(self) -> bool:
        return bool(self.channels)

    async def open(self) -> None:
        if not self.enabled:
            return
        app, config = self.app, self.app.config
        await self.mcp.start()
        ask = gateway_ask(lambda: app.gateway.gateway)
        summarize = gateway_summarizer(ask, config.assistant.model)
        self.jobs = Jobs(config, self.bus, summarize=summarize)
        await self.jobs.start()
        tools = app.tools  # the one registry; the MCP servers' tools join it
        self.mcp.attach(tools)
        services = Services(
            memory=memory_of(app), safety=app.pipeline.safety, config=config,
            http=app.gateway.session, scheduler=self.jobs.scheduler, mcp=self.mcp,
            environ=os.environ,
        )  # fmt: skip
        self.agent = assistant_from_app(app, tools=tools, services=services)
        self._serving = asyncio.create_task(self.agent.run(self.bus), name="assistant")

    async def reload(self, config: Config) -> None:
        if self.enabled:
            await self.mcp.reload(config.assistant.mcp_servers)

    async def close(self) -> None:
        serving, self._serving = self._serving, None
        if serving is not None:
            serving.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await serving
        if self.jobs is not None:
            await self.jobs.stop()
            self.jobs = None
        if self.enabled:
            await self.mcp.stop()
        self.agent = None
