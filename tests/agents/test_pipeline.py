"""The registry from the config, and the pipeline's delegation through the Python API (SPEC PR-4):
an agent runs the intent first; the local handler is the fallback; failures are data."""

from __future__ import annotations

import pytest

from nerve.agents import AgentRegistry
from nerve.agents.store import PostgresAgentStore, SQLiteAgentStore
from nerve.config import parse_config
from nerve.errors import ConfigError
from nerve.intent import IntentClassifier
from nerve.pipeline import Pipeline, intent_tool
from nerve.safety import SafetyEngine
from nerve.tools import ToolRegistry
from tests.agents.fake_agent import free_port


def test_the_registry_is_built_from_the_config():
    config = parse_config(
        {
            "storage": {"url": "sqlite:///data/n.db"},
            "agents": {"allowed_hosts": ["agents.internal"], "timeout_seconds": 3, "retries": 0,
                       "max_response_bytes": 2048},
        },
        environ={},
    )  # fmt: skip
    registry = AgentRegistry.from_config(config)
    assert isinstance(registry.store, SQLiteAgentStore) and str(registry.store.path) == "data/n.db"
    assert registry.guard.names == {"agents.internal"}
    client = registry.client
    assert (client.timeout_seconds, client.retries, client.max_response_bytes) == (3, 0, 2048)


def test_postgres_storage_keeps_its_schema():
    config = parse_config({"storage": {"url": "postgresql://u@db:5432/n?schema=reg"}}, environ={})
    store = AgentRegistry.from_config(config).store
    assert isinstance(store, PostgresAgentStore)
    assert store.schema == "reg" and store.dsn == "postgresql://u@db:5432/n"


def test_an_unsupported_storage_url_names_the_key():
    config = parse_config({"storage": {"url": "mysql://db/n"}}, environ={})
    with pytest.raises(ConfigError, match=r"storage\.url: unsupported storage URL scheme 'mysql'"):
        AgentRegistry.from_config(config)


@pytest.mark.parametrize(
    ("agents", "key"),
    [({"timeout_seconds": 0}, "timeout_seconds"), ({"retries": -1}, "retries"),
     ({"surprise": 1}, "surprise")],
)  # fmt: skip
def test_bad_agents_settings_name_the_key(agents, key):
    with pytest.raises(ConfigError, match=rf"agents\.{key}"):
        parse_config({"agents": agents}, environ={})


def pipeline(handlers=None, delegate=None):
    return Pipeline(
        intents=IntentClassifier(), safety=SafetyEngine(), tools=handlers, delegate=delegate
    )


async def test_an_agent_runs_the_intent_and_the_local_handler_does_not(local, agent):
    ran = []

    async def explain(request):
        ran.append(request)
        return {"local": True}

    handlers = ToolRegistry()
    handlers.register(intent_tool("explain", explain))
    registry = await local()
    await registry.register("helper", f"{agent.url}/echo", ["explain"])
    result = await pipeline(handlers, registry.delegate).process("explain how DNS works", "u")
    assert result.execution["executed_by"] == "agent:helper" and ran == []
    assert result.execution["result"]["echo"]["payload"]["intent"]["parameters"] == {
        "target": "how DNS works"
    }


async def test_a_failing_local_fallback_reports_both_failures(local):
    async def explain(request):
        raise RuntimeError("local broke too")

    handlers = ToolRegistry()
    handlers.register(intent_tool("explain", explain, retries=0))
    registry = await local()
    await registry.register("helper", f"http://127.0.0.1:{free_port()}/", ["explain"])
    result = await pipeline(handlers, registry.delegate).process("explain how DNS works")
    assert result.execution["status"] == "failed" and result.execution["executed_by"] == "local"
    assert result.execution["error"] == "intent_explain failed: RuntimeError: local broke too"
    assert "agent 'helper' failed: unreachable" in result.execution["agent_error"]


async def test_a_delegate_that_raises_falls_back_to_the_local_handler():
    async def broken(task, payload):
        raise ConnectionError("registry store is down")

    async def explain(request):
        return {"local": True}

    handlers = ToolRegistry()
    handlers.register(intent_tool("explain", explain))
    result = await pipeline(handlers, broken).process("explain how DNS works")
    assert result.execution["result"] == {"local": True}
    assert result.execution["executed_by"] == "local"
    assert result.execution["agent_error"] == "delegation failed: registry store is down"
