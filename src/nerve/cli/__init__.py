"""The `nerve` command: the only place that reads config and wires objects together.

Each subcommand lives in its own module and registers itself on the group in `base`.
"""

from nerve.cli import config_cmd, keys_cmd, mcp_cmd, memory_cmd, serve, understand  # noqa: F401
from nerve.cli.base import cli

__all__ = ["cli", "main"]


def main() -> None:
    cli()


if __name__ == "__main__":
    main()
