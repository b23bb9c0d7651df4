"""`nerve serve`: the HTTP server (gateway, /api, /docs)."""

from __future__ import annotations

import os
from typing import Any

import click

from nerve import __version__
from nerve.cli.access_cmd import managed_keys_exist
from nerve.cli.base import cli, fail, load, log_level_option, require_extras, setup_logging
from nerve.config import find_config_file, is_loopback
from nerve.serving import protocol_for

__all__ = ["serve"]


@cli.command()
@click.option("--config", "config_path", metavar="FILE", help="Config file (YAML).")
@click.option("--host", help="Address to bind. [default: server.host, 127.0.0.1]")
@click.option("--port", type=int, help="Port to listen on. [default: server.port, 8080]")
@click.option(
    "--workers",
    type=click.IntRange(1, 64),
    help="Worker processes; more than 1 needs redis.url to share limits. [default: 1]",
)
@log_level_option("info")
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

    config = load(config_path)
    host = host or config.server.host
    port = config.server.port if port is None else port
    workers = workers or config.server.workers
    if not is_loopback(host) and not config.server.api_keys and not managed_keys_exist(config):
        fail(
            f"refusing to listen on {host}: there are no API keys (server.api_keys is empty and "
            "`nerve keys create` made none), so anyone who can reach this address could spend "
            "your provider keys. Set server.api_keys, run `nerve keys create`, or bind to "
            "127.0.0.1."
        )
    if workers > 1 and not config.redis.url:
        raise click.UsageError(
            f"{workers} workers without redis.url: each worker would enforce its own rate "
            f"limits, breakers and cooldowns ({workers}x the configured limits) and count its "
            "own stats. Set redis.url (e.g. redis://127.0.0.1:6379/0) so the workers share one "
            "state, or run a single worker."
        )
    require_extras(config)
    setup_logging(log_level)
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
        "http": protocol_for(config.limits),  # httptools, guarded: nerve.serving
        "server_header": False,
    }
    if workers > 1:
        options["http"] = "nerve.serving:GuardedHttp"  # each worker configures it (server.py)
        # Each worker builds its own app from the same file (uvicorn needs an import string).
        if config_path:
            os.environ["NERVE_CONFIG"] = os.path.abspath(config_path)
        uvicorn.run("nerve.server:app_from_env", factory=True, workers=workers, **options)
    else:
        path = find_config_file(config_path, os.environ)  # the file a reload re-reads
        uvicorn.run(build_app(config, config_path=path), **options)
