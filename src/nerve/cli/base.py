"""The `nerve` command group and what every subcommand shares.

Exit codes: 0 ok, 1 refused or failed (bad config, refused start, blocked item), 2 usage.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Any, NoReturn, Protocol, TypeVar

import click

from nerve import __version__
from nerve.config import Config, load_config
from nerve.errors import ConfigError, NerveError

__all__ = [
    "cli",
    "config_option",
    "fail",
    "load",
    "log_level_option",
    "open_store",
    "setup_logging",
]

F = TypeVar("F", bound=Callable[..., Any])

config_option = click.option("--config", "config_path", metavar="FILE", help="Config file.")


class _Opens(Protocol):
    async def open(self) -> None: ...


def fail(message: str, code: int = 1) -> NoReturn:
    """Exit `code` (1: refused or failed; 2: bad input) with `message` on stderr."""
    click.echo(f"nerve: {message}", err=True)
    sys.exit(code)


async def open_store(store: _Opens, url: str) -> None:
    """Open a store on `storage.url`, or raise NerveError naming its scheme and the cause
    (unreachable, refused, no such database), never the URL: it may hold a password."""
    try:
        await store.open()
    except Exception as e:
        scheme = url.split(":", 1)[0]
        raise NerveError(f"cannot open the {scheme} store: {type(e).__name__}: {e}") from e


def log_level_option(default: str) -> Callable[[F], F]:
    """`--log-level`, the same on every long-running command."""
    return click.option(
        "--log-level",
        default=default,
        show_default=True,
        type=click.Choice(["debug", "info", "warning", "error"]),
        help="Logs go to stderr.",
    )


def setup_logging(level: str) -> None:
    """Logs to stderr: stdout belongs to answers and protocols (MCP over stdio)."""
    logging.basicConfig(
        stream=sys.stderr,
        level=level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )


def load(path: str | None) -> Config:
    try:
        return load_config(path)
    except ConfigError as e:
        fail(f"invalid config: {e.message}")


def require_extras(config: Config) -> None:
    """Exit 1, naming the pip extra, when the config needs one that is not installed (Redis,
    traces): before the app starts, not as a traceback from its start-up. Imported here, not
    at the top: the CLI starts fast and runs without either."""
    try:
        if config.redis.url:
            from nerve.gateway.resilience.shared import require_redis

            require_redis()
        if config.telemetry.otlp_endpoint:  # the extra that exports traces (SPEC OB-1)
            from nerve.telemetry import require_telemetry

            require_telemetry()
    except ConfigError as e:
        fail(e.message)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="nerve")
def cli() -> None:
    """nerve: a self-hosted intelligence layer for AI agents.

    Config: --config FILE, else $NERVE_CONFIG, else ./nerve.yaml, else built-in defaults.
    """
