"""The agent registry (SPEC PR-4): who is out there, what they can do, and calling them.

`AgentRegistry` is the one Python API behind `/api/agents`, the MCP `register_agent` and
`route_agent` tools, and the pipeline's delegation. Registration validates and stores (upsert by
name); `route` never raises for an agent that is unknown, down, slow or answering nonsense: it
returns `{"success": False, "error", "fallback": True, "agent"}` so the caller can run the task
locally instead. Only a malformed call (a bad agent name, task or payload) is a RequestError.
"""

from __future__ import annotations

import asyncio
import builtins
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import orjson

from nerve.agents.client import AgentClient
from nerve.agents.guard import Guard, Refused
from nerve.agents.model import Agent, check_capabilities, check_endpoint, check_name, check_task
from nerve.agents.store import AgentStore, agent_store_from_url
from nerve.config import Config
from nerve.errors import AgentCallFailed, ConfigError, RequestError

__all__ = ["AgentRegistry"]

log = logging.getLogger("nerve.agents")
MAX_ENDPOINT_CHARS = 2000


def _failed(agent: str, error: str) -> dict[str, Any]:
    return {"success": False, "error": error, "fallback": True, "agent": agent}


class AgentRegistry:
    def __init__(
        self,
        store: AgentStore,
        *,
        allowed_hosts: Iterable[str] = (),
        timeout_seconds: float = 10.0,
        retries: int = 2,
        max_response_bytes: int = 1 << 20,
        backoff_seconds: float = 0.2,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.guard = Guard(allowed_hosts)
        self.client = AgentClient(
            self.guard,
            timeout_seconds=timeout_seconds,
            retries=retries,
            max_response_bytes=max_response_bytes,
            backoff_seconds=backoff_seconds,
            sleep=sleep,
        )
        self._clock = clock

    @classmethod
    def from_config(cls, config: Config) -> AgentRegistry:
        """Stored where memory is (`storage.url`); nothing is opened yet."""
        try:
            store = agent_store_from_url(config.storage.url)
        except ValueError as e:
            raise ConfigError(str(e), path="storage.url") from None
        return cls(
            store,
            allowed_hosts=config.agents.allowed_hosts,
            timeout_seconds=config.agents.timeout_seconds,
            retries=config.agents.retries,
            max_response_bytes=config.agents.max_response_bytes,
        )

    async def open(self) -> None:
        await self.store.open()
        await self.client.open()

    async def close(self) -> None:
        try:
            await self.client.close()
        finally:
            await self.store.close()

    async def register(
        self, agent_name: str, endpoint: str, capabilities: list[str]
    ) -> dict[str, Any]:
        """Add or update (by name) an agent; the stored agent. Bad fields are RequestErrors."""
        stored, _ = await self.upsert(agent_name, endpoint, capabilities)
        return stored

    async def upsert(
        self, agent_name: str, endpoint: str, capabilities: list[str]
    ) -> tuple[dict[str, Any], bool]:
        """`register`, also saying whether the agent is new."""
        name, caps = check_name(agent_name), check_capabilities(capabilities)
        check_endpoint(endpoint, MAX_ENDPOINT_CHARS)
        try:
            await self.guard.check_resolved(endpoint)
        except Refused as e:
            raise RequestError(f"'endpoint' {e}", param="endpoint") from None
        now = self._clock()
        stored, created = await self.store.upsert(Agent(name, endpoint, caps, now, now))
        log.info("agent %s %s at %s", name, "registered" if created else "updated", endpoint)
        return stored.to_dict(), created

    async def list(self, capability: str | None = None) -> builtins.list[dict[str, Any]]:
        """Every agent by name, or those having `capability`."""
        agents = await self.store.all()
        return [a.to_dict() for a in agents if capability is None or capability in a.capabilities]

    async def get(self, agent_name: str) -> dict[str, Any] | None:
        agent = await self.store.get(agent_name)
        return agent.to_dict() if agent is not None else None

    async def delete(self, agent_name: str) -> bool:
        return await self.store.delete(agent_name)

    async def route(
        self, target_agent: str, task: str, payload: dict[str, Any], *, idempotent: bool = False
    ) -> dict[str, Any]:
        """POST {task, payload} to the agent; its JSON answer as `result`, or a failure to fall
        back from. Retried with backoff only when `idempotent`."""
        check_name(target_agent, "target_agent")  # no agent has another name: a malformed call
        check_task(task)
        if not isinstance(payload, dict):
            raise RequestError("'payload' must be a JSON object", param="payload")
        try:
            body = orjson.dumps({"task": task, "payload": payload})
        except TypeError as e:
            raise RequestError(
                f"'payload' is not JSON-serializable: {e}", param="payload"
            ) from None
        agent = await self.store.get(target_agent)
        if agent is None:
            return _failed(target_agent, f"no agent named {target_agent!r} is registered")
        started = time.perf_counter()
        try:
            result = await self.client.call(agent.endpoint, body, idempotent=idempotent)
        except AgentCallFailed as e:
            log.warning("agent %s failed task %s: %s", target_agent, task, e)
            return _failed(target_agent, f"agent {target_agent!r} failed: {e}")
        latency = round((time.perf_counter() - started) * 1000, 1)
        # A record (`nerve_record`): the admin panel stores its fields as an AGENT_ROUTE event.
        done = {"kind": "AGENT_ROUTE", "agent": target_agent, "task": task, "ok": True,
                "latency_ms": latency}  # fmt: skip
        log.info("agent %s did task %s in %.1f ms", target_agent, task, latency,
                 extra={"nerve_record": done})  # fmt: skip
        return {"success": True, "agent": target_agent, "result": result,
                "latency_ms": latency}  # fmt: skip

    async def delegate(self, task: str, payload: dict[str, Any]) -> dict[str, Any] | None:
        """For the pipeline: route `task` to the first agent (by name) having it as a
        capability; None when no agent has it."""
        capable = await self.list(task)
        if not capable:
            return None
        return await self.route(capable[0]["agent_name"], task, payload)
