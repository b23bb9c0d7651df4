"""`nerve memory store|recall|events|facts|context|forget|export|import`: memory from the shell.

Each command opens the configured store (and the WAL, unless a running server owns it), does one
thing, prints JSON and closes. Bad input exits 1 with the field named; nothing is half-written.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import click
import orjson

from nerve.cli.base import cli, fail, load
from nerve.cli.memory_transfer import export_command, import_command
from nerve.errors import NerveError
from nerve.memory.model import KINDS, TIERS

__all__ = ["memory_group"]

config_option = click.option("--config", "config_path", metavar="FILE", help="Config file.")
user_option = click.option("--user", "user_id", required=True, help="Whose memory.")


def _json_arg(value: str, name: str) -> Any:
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError as e:
        fail(f"--{name} is not valid JSON: {e}")


def _run(config_path: str | None, action: Callable[[Any], Awaitable[Any]]) -> None:
    from nerve.memory.build import build_memory

    config = load(config_path)

    async def main() -> Any:
        memory = build_memory(config)
        await memory.open()
        try:
            return await action(memory)
        finally:
            await memory.close()

    try:
        result = asyncio.run(main())
    except NerveError as e:
        fail(e.message)
    click.echo(orjson.dumps(result, option=orjson.OPT_INDENT_2))
    if isinstance(result, dict) and result.get("stored") is False:
        sys.exit(1)


@cli.group("memory")
def memory_group() -> None:
    """Store and recall what agents remember; export and import it as JSON lines."""


memory_group.add_command(export_command)
memory_group.add_command(import_command)


@memory_group.command("store")
@user_option
@click.option("--tier", type=click.Choice(TIERS), default="episodic", show_default=True)
@click.option("--intent", required=True, help="What kind of memory, e.g. preference.")
@click.option("--data", required=True, help='A JSON object, e.g. \'{"text": "likes tea"}\'.')
@click.option(
    "--importance", type=float, required=True, help="0..1; below the threshold: not kept."
)
@click.option("--session", "session_id")
@config_option
def store(user_id: str, tier: str, intent: str, data: str, importance: float,
          session_id: str | None, config_path: str | None) -> None:  # fmt: skip
    """Store one memory; exits 1 when it was not persisted (and says why)."""
    payload = _json_arg(data, "data")
    _run(config_path, lambda m: _dict(m.store_memory(
        user_id, tier=tier, intent=intent, data=payload, importance=importance,
        session_id=session_id)))  # fmt: skip


@memory_group.command("recall")
@user_option
@click.option("--query", help="Free text to search for.")
@click.option("--intent")
@click.option("--tier", type=click.Choice(TIERS))
@click.option("--kind", type=click.Choice(KINDS), help="Only memories, events, facts, ...")
@click.option("--session", "session_id", help="Only this session's.")
@click.option("--limit", type=click.IntRange(1, 10_000), default=10, show_default=True)
@config_option
def recall(user_id: str, query: str | None, intent: str | None, tier: str | None,
           kind: str | None, session_id: str | None, limit: int,
           config_path: str | None) -> None:  # fmt: skip
    """Recall memories, best first (relevance × decayed importance)."""

    async def action(memory: Any) -> Any:
        found = await memory.recall(user_id, query=query, intent=intent, tier=tier, kind=kind,
                                    session_id=session_id, limit=limit)  # fmt: skip
        return {"records": [x.to_dict() for x in found]}

    _run(config_path, action)


@memory_group.command("events")
@user_option
@click.option("--session", "session_id", required=True)
@click.option("--type", "event_type", required=True, help="eye_read, body_bash, nose_error, ...")
@click.option("--payload", required=True, help='A JSON object, e.g. \'{"path": "app.py"}\'.')
@config_option
def events(user_id: str, session_id: str, event_type: str, payload: str,
           config_path: str | None) -> None:  # fmt: skip
    """Record a perception event."""
    body = _json_arg(payload, "payload")
    _run(config_path, lambda m: _dict(m.record_event(user_id, session_id, event_type, body)))


@memory_group.command("facts")
@user_option
@click.option("--entity", required=True)
@click.option("--attribute", required=True)
@click.option("--value", required=True)
@click.option("--importance", type=float, default=0.7, show_default=True)
@click.option("--session", "session_id")
@config_option
def facts(user_id: str, entity: str, attribute: str, value: str, importance: float,
          session_id: str | None, config_path: str | None) -> None:  # fmt: skip
    """Store a fact triple (the latest value wins; earlier ones stay in its history)."""
    _run(config_path, lambda m: _dict(m.store_fact(
        user_id, entity, attribute, value, importance, session_id)))  # fmt: skip


@memory_group.command("context")
@user_option
@click.option("--session", "session_id")
@click.option("--query")
@click.option("--max", "max_contexts", type=click.IntRange(1, 50))
@config_option
def context(user_id: str, session_id: str | None, query: str | None, max_contexts: int | None,
            config_path: str | None) -> None:  # fmt: skip
    """What an agent should know at the start of a session, with its prompt block."""
    from nerve.memory.context import build_context

    async def action(memory: Any) -> Any:
        built = await build_context(memory, user_id, session_id=session_id, query=query,
                                    max_contexts=max_contexts or 5)  # fmt: skip
        return built.to_dict()

    _run(config_path, action)


@memory_group.command("forget")
@click.option("--id", "record_ids", multiple=True, help="A memory id (repeatable).")
@click.option("--user", "user_id", help="Forget everything about this user.")
@config_option
def forget(record_ids: tuple[str, ...], user_id: str | None, config_path: str | None) -> None:
    """Delete memories by id, or everything about a user."""
    if bool(record_ids) == bool(user_id):
        raise click.UsageError("give either --id (one or more) or --user")

    async def action(memory: Any) -> Any:
        if user_id:
            return {"deleted": await memory.forget_user(user_id)}
        return {"deleted": await memory.forget(list(record_ids))}

    _run(config_path, action)


async def _dict(result: Awaitable[Any]) -> Any:
    return (await result).to_dict()
