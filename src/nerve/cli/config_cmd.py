"""`nerve config check`: validate a config without starting."""

from __future__ import annotations

import sys
from typing import Any

import click
import orjson

from nerve.cli.base import cli
from nerve.config import load_config
from nerve.errors import ConfigError

__all__ = ["config_group"]


@cli.group("config")
def config_group() -> None:
    """Inspect and validate configuration."""


@config_group.command("check")
@click.argument("file", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def config_check(file: str | None, as_json: bool) -> None:
    """Validate a config FILE (default: $NERVE_CONFIG or ./nerve.yaml) without starting.

    Prints what is wrong with the path of the key; exits 1 when the config is invalid.
    """
    try:
        config = load_config(file)
    except ConfigError as e:
        if as_json:
            listed = [{"path": path, "error": message} for path, message in e.problems]
            click.echo(orjson.dumps({"ok": False, "path": e.path, "error": e.message,
                                     "problems": listed}))  # fmt: skip
        else:
            click.echo(f"invalid config: {e.message}", err=True)
        sys.exit(1)
    missing = [p.name for p in config.providers if p.missing_key]
    why = {p.name: p.missing_key_why for p in config.providers if p.missing_key}
    summary: dict[str, Any] = {
        "ok": True,
        "providers": [p.name for p in config.providers],
        "routes": [r.name for r in config.routes],
        "providers_without_key": missing,
    }
    if as_json:
        click.echo(orjson.dumps(summary))
        return
    click.echo(
        f"ok: {len(config.providers)} providers, {len(config.routes)} routes "
        f"({', '.join(summary['routes'])})"
    )
    for name in missing:
        click.echo(
            f"warning: provider {name} has no API key ({why[name]}); its models will be skipped"
        )
