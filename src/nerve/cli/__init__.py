"""The `nerve` command: the only place that reads config and wires objects together.

Each subcommand lives in its own module and registers itself on the group in `base`. A
subcommand imports what it runs inside its function, so `nerve --help` or `nerve safety check`
does not pay for importing the server, the gateway and the assistant (startup time). None of
those imports dodges a cycle: `lint-imports` (make check) would fail on one.
"""

from nerve.cli import (  # noqa: F401
    access_cmd,
    chat_cmd,
    config_cmd,
    discord_cmd,
    doctor_cmd,
    keys_cmd,
    mcp_cmd,
    memory_cmd,
    serve,
    understand,
)
from nerve.cli.base import cli

__all__ = ["cli", "main"]


def main() -> None:
    cli()


if __name__ == "__main__":
    main()
