"""The `nerve` command: the only place that reads config and wires objects together.

Exit codes: 0 ok, 1 refused or failed (bad config, refused start), 2 usage.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

import click
import orjson

from nerve import __version__
from nerve.config import Config, is_loopback, load_config
from nerve.errors import ConfigError

__all__ = ["main"]


def _fail(message: str) -> None:
    click.echo(f"nerve: {message}", err=True)
    sys.exit(1)


def _load(path: str | None) -> Config:
    try:
        return load_config(path)
    except ConfigError as e:
        _fail(f"invalid config: {e.message}")
        raise AssertionError("unreachable") from None


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="nerve")
def cli() -> None:
    """nerve: a self-hosted intelligence layer for AI agents.

    Config: --config FILE, else $NERVE_CONFIG, else ./nerve.yaml, else built-in defaults.
    """


@cli.command()
@click.option("--config", "config_path", metavar="FILE", help="Config file (YAML).")
@click.option("--host", help="Address to bind. [default: server.host, 127.0.0.1]")
@click.option("--port", type=int, help="Port to listen on. [default: server.port, 8080]")
@click.option("--workers", type=click.IntRange(1, 64), help="Worker processes. [default: 1]")
@click.option(
    "--log-level",
    default="info",
    show_default=True,
    type=click.Choice(["debug", "info", "warning", "error"]),
)
def serve(
    config_path: str | None,
    host: str | None,
    port: int | None,
    workers: int | None,
    log_level: str,
) -> None:
    """Run the HTTP server: the OpenAI-compatible gateway and nerve's APIs.

    \b
    Examples:
      nerve serve                          # 127.0.0.1:8080, built-in defaults
      nerve serve --config nerve.yaml --port 9000
    """
    import uvicorn

    from nerve.server import build_app

    config = _load(config_path)
    host = host or config.server.host
    port = config.server.port if port is None else port
    workers = workers or config.server.workers
    if not is_loopback(host) and not config.server.api_keys:
        _fail(
            f"refusing to listen on {host}: server.api_keys is empty, so anyone who can reach "
            "this address could spend your provider keys. Set server.api_keys in the config, "
            "or bind to 127.0.0.1."
        )
    logging.basicConfig(
        level=log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    missing = [p.name for p in config.providers if p.missing_key]
    click.echo(
        f"nerve {__version__} on http://{host}:{port}  routes: "
        f"{', '.join(r.name for r in config.routes)}"
        + (f"  (no API key: {', '.join(missing)})" if missing else ""),
        err=True,
    )
    options: dict[str, Any] = {
        "host": host,
        "port": port,
        "log_level": log_level,
        "access_log": False,
        "loop": "uvloop",
        "http": "httptools",
        "server_header": False,
    }
    if workers > 1:
        # Each worker builds its own app from the same file (uvicorn needs an import string).
        if config_path:
            os.environ["NERVE_CONFIG"] = os.path.abspath(config_path)
        uvicorn.run("nerve.server:app_from_env", factory=True, workers=workers, **options)
    else:
        uvicorn.run(build_app(config), **options)


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
            click.echo(orjson.dumps({"ok": False, "path": e.path, "error": e.message}))
        else:
            click.echo(f"invalid config: {e.message}", err=True)
        sys.exit(1)
    missing = [p.name for p in config.providers if p.missing_key]
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
        click.echo(f"warning: provider {name} has no API key; its models will be skipped")


def main() -> None:
    cli()


if __name__ == "__main__":
    main()
