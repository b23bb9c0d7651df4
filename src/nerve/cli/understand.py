"""`nerve process`, `nerve safety check`, `nerve language detect`.

The last two share one convention: with TEXT, one JSON result; without, standard input is read
one item per line (or, with --jsonl, one `{"text": ...}` object per line, for items containing
newlines) and one JSON result is written per line, in the same order. A malformed input line
gets an `{"error": ...}` line in its place and the exit code becomes 1; nothing is skipped.
"""

from __future__ import annotations

import asyncio
import io
import logging
import os
import sys
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, cast

import click
import orjson

from nerve.cli.base import cli, fail, load
from nerve.errors import NerveError

__all__ = ["SQL_DIALECTS", "language_group", "process", "safety_group"]

# nerve.safety.scope.DIALECTS, spelled out: importing the safety package here would slow every
# command's start (a test keeps the two equal).
SQL_DIALECTS = ("any", "postgres", "mysql", "mariadb", "sqlite", "mssql", "oracle")


def _items(text: str | None, jsonl: bool) -> Iterator[tuple[int, str | None, str | None]]:
    """(line number, item, error) for TEXT or each line of stdin."""
    if text is not None:
        yield 1, text, None
        return
    stream = sys.stdin
    if isinstance(stream, io.TextIOWrapper):
        stream.reconfigure(errors="replace")  # invalid UTF-8 is judged, not a crash
    for number, line in enumerate(stream, 1):
        line = line.rstrip("\r\n")
        if not jsonl:
            yield number, line, None
            continue
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError as e:
            yield number, None, f"line {number}: not JSON ({e})"
            continue
        if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
            yield number, None, f'line {number}: expected an object {{"text": "..."}}'
            continue
        yield number, obj["text"], None


async def _each(
    text: str | None, jsonl: bool, judge: Callable[[str], Awaitable[dict[str, Any]]]
) -> int:
    """Write one JSON line per item; return the count of malformed items."""
    bad = 0
    for _, item, error in _items(text, jsonl):
        result = {"error": error} if item is None else await judge(item)
        bad += item is None
        click.echo(orjson.dumps(result))  # one line each, flushed: usable in a pipe
    return bad


@cli.group("language")
def language_group() -> None:
    """Language detection and keyword normalization."""


@language_group.command("detect")
@click.argument("text", required=False)
@click.option("--jsonl", is_flag=True, help='Read stdin as one {"text": ...} object per line.')
def language_detect(text: str | None, jsonl: bool) -> None:
    """Detect the languages of TEXT (or of each stdin line) and print one JSON result.

    \b
    Examples:
      nerve language detect "report ko pdf mein convert karo"
      printf 'hello\\nfile anuppu\\n' | nerve language detect
    """
    from nerve.language import detect

    async def judge(item: str) -> dict[str, Any]:
        return detect(item).to_dict()

    sys.exit(1 if asyncio.run(_each(text, jsonl, judge)) else 0)


@cli.group("safety")
def safety_group() -> None:
    """Safety verdicts for shell commands, SQL, request text and named actions."""


@safety_group.command("check")
@click.option("--kind", type=click.Choice(["shell", "sql", "text", "action"]), required=True)
@click.argument("text", required=False)
@click.option("--jsonl", is_flag=True, help='Read stdin as one {"text": ...} object per line.')
@click.option("--strict", is_flag=True, help="Also block medium-risk commands and intents.")
@click.option(
    "--cwd",
    metavar="DIR",
    help="Where the command runs; relative paths resolve against it and, without --root, it is "
    "the workspace. Default: none (paths are judged by their kind alone).",
)
@click.option(
    "--root",
    "roots",
    metavar="DIR",
    multiple=True,
    help="A workspace directory the agent may change (repeatable). Deleting or overwriting "
    "outside the workspace is refused.",
)
@click.option("--read-only", is_flag=True, help="SQL may only read (SELECT, SHOW, EXPLAIN, ...).")
@click.option(
    "--dialect",
    type=click.Choice(SQL_DIALECTS),
    default="any",
    show_default=True,
    help="SQL dialect; 'any' takes the strictest reading (comments, escapes).",
)
def safety_check(
    kind: str,
    text: str | None,
    jsonl: bool,
    strict: bool,
    cwd: str | None,
    roots: tuple[str, ...],
    read_only: bool,
    dialect: str,
) -> None:
    """Judge TEXT (or each stdin line) and print one verdict as JSON per item.

    With TEXT, the exit code is 1 when it is blocked. --cwd and --root take paths as given
    or relative to the current directory.

    \b
    Examples:
      nerve safety check --kind shell 'sudo rm -rf --no-preserve-root /'
      nerve safety check --kind shell --cwd ~/proj 'rm -rf build'      # allowed: inside
      nerve safety check --kind shell --cwd ~/proj 'rm -rf ../other'   # blocked: outside
      nerve safety check --kind sql --read-only 'DELETE FROM t WHERE id = 1'
      nerve safety check --kind sql < statements.sql
    """
    from nerve.safety import Kind, SafetyEngine, Scope, ScopeError

    try:
        scope = Scope.of(
            _absolute(cwd),
            [p for r in roots if (p := _absolute(r))],
            "read_only" if read_only else "default",
            dialect,
        )
    except ScopeError as exc:
        raise click.BadParameter(exc.message) from None
    engine = SafetyEngine(strict=strict)

    async def judge(item: str) -> dict[str, Any]:
        return (await engine.check(cast(Kind, kind), item, scope=scope)).to_dict()

    if text is not None:
        verdict = asyncio.run(judge(text))
        click.echo(orjson.dumps(verdict))
        sys.exit(0 if verdict["allowed"] else 1)
    sys.exit(1 if asyncio.run(_each(None, jsonl, judge)) else 0)


def _absolute(path: str | None) -> str | None:
    """A path the user typed, made absolute the way their shell would (~, relative)."""
    return os.path.abspath(os.path.expanduser(path)) if path else None


@cli.command()
@click.argument("text")
@click.option("--user", "user_id", default="cli", show_default=True, help="Who is asking.")
@click.option("--config", "config_path", metavar="FILE", help="Config file (YAML).")
@click.option("--no-execute", is_flag=True, help="Understand and judge, but run nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the whole result as JSON.")
@click.option("-v", "--verbose", is_flag=True, help="Log warnings (e.g. providers without keys).")
def process(
    text: str,
    user_id: str,
    config_path: str | None,
    no_execute: bool,
    as_json: bool,
    verbose: bool,
) -> None:
    """Run TEXT through the pipeline: language → intent → safety → execute.

    Exit code 1 when safety blocked it or its handler failed.
    """
    from nerve.gateway.app import GatewayState
    from nerve.pipeline import build_pipeline

    config = load(config_path)
    logging.basicConfig(
        level=logging.INFO if verbose else logging.ERROR,
        format="%(levelname)s %(name)s: %(message)s",
    )

    async def run() -> dict[str, Any]:
        state = GatewayState(config)
        await state.open()
        try:
            pipeline = build_pipeline(config, state.gateway.ask)
            result = await pipeline.process(text, user_id, execute=not no_execute)
            return result.to_dict()
        finally:
            await state.close()

    try:
        result = asyncio.run(run())
    except NerveError as e:
        fail(e.message)
    execution = result["execution"] or {}
    if as_json:
        click.echo(orjson.dumps(result, option=orjson.OPT_INDENT_2))
    else:
        lang, intent, safety = result["language"], result["intent"], result["safety"]
        click.echo(
            f"language: {', '.join(lang['languages']) or '-'}"
            f"{' (code-switched)' if lang['is_code_switched'] else ''}"
        )
        click.echo(
            f"intent:   {intent['intent']} {orjson.dumps(intent['parameters']).decode()}"
            f" ({intent['source']}, {intent['confidence']:.2f})"
        )
        click.echo(
            f"safety:   {'allowed' if safety['allowed'] else 'BLOCKED'}"
            f" [{safety['risk_level']}] {safety['reason']}"
        )
        click.echo(f"execution: {execution.get('status', 'skipped')}")
        answer = (execution.get("result") or {}).get("answer")
        if answer:
            click.echo(answer)
        elif execution.get("error") or execution.get("message"):
            click.echo(execution.get("error") or execution.get("message"))
    failed = not result["safety"]["allowed"] or execution.get("status") == "failed"
    sys.exit(1 if failed else 0)
