"""`nerve discord`: the assistant as a Discord bot, with reminders and mail monitoring.

The app is the same NerveApp `nerve serve` runs (gateway, memory, tools), opened by its own
lifespan, as `nerve chat` does. One bus joins the Discord channel, the assistant, the scheduler
(reminders set in Discord fire back into it) and the mail monitor (`assistant.mail.accounts`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os

import click

from nerve.cli.base import cli, load, log_level_option, require_extras, setup_logging
from nerve.config import find_config_file

__all__ = ["discord_bot"]


@cli.command(name="discord")
@click.option("--config", "config_path", metavar="FILE", help="Config file (YAML).")
@log_level_option("info")
def discord_bot(config_path: str | None, log_level: str) -> None:
    """Run the assistant as a Discord bot (answers mentions and DMs).

    \b
    Needs `pip install 'nerve[discord]'` and a bot token:
      assistant: {discord: {token: ${DISCORD_TOKEN}}}
      DISCORD_TOKEN=... nerve discord --config nerve.yaml
    """
    setup_logging(log_level)
    config = load(config_path)
    require_extras(config)
    settings = config.assistant.discord
    if not settings.token:
        raise click.ClickException("assistant.discord.token is empty: set DISCORD_TOKEN")
    try:
        from nerve.channels.discord import DiscordChannel
    except ImportError as exc:
        raise click.ClickException(
            f"discord.py is not installed ({exc}): pip install 'nerve[discord]'"
        ) from exc
    from nerve.server import build_app

    path = find_config_file(config_path, os.environ)
    app = build_app(config, config_path=path, channels=("discord",))

    async def run() -> None:
        async with app.api.router.lifespan_context(app.api):
            host = app.assistant  # the agent, its MCP servers and jobs, opened by the lifespan
            channel = DiscordChannel(
                settings.token or "", dms=settings.dms, channels=settings.channels,
                api_base=settings.api_base, gateway_url=settings.gateway_url,
            )  # fmt: skip
            try:
                await channel.start(host.bus)
                logging.getLogger("nerve.discord").info("nerve is on Discord")
                await channel.wait_closed()
            finally:
                await channel.stop()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run())
