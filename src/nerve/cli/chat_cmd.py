"""`nerve chat`: talk to the assistant in the terminal, or ask once with `--once TEXT`.

The app is the same NerveApp `nerve serve` runs (gateway, memory, tools), opened by its own
lifespan, as `nerve mcp` does; the assistant reaches the model through the gateway in process.
`--once` speaks as the user's web chat (`user:<id>`: every /chat tab of theirs), so what it
leaves for later, a reminder, is shown by a running `nerve serve` in any such tab, or waits for
one. Logs go to stderr, errors only unless `--log-level` asks for more (the terminal is the chat);
stdout carries only the answers. The admin panel is not opened: nothing here serves it.
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import os

import click

from nerve.cli.base import cli, load, log_level_option, require_extras, setup_logging
from nerve.config import find_config_file

__all__ = ["chat"]


def _default_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "me"


@cli.command()
@click.option("--once", "once", metavar="TEXT", help="Ask one question, print the answer, exit.")
@click.option("--user", "user_id", metavar="U", help="Whose memory and tasks (default: $USER).")
@click.option("--config", "config_path", metavar="FILE", help="Config file (YAML).")
@log_level_option("error")
def chat(once: str | None, user_id: str | None, config_path: str | None, log_level: str) -> None:
    """Chat with the assistant: interactive, or one question with --once.

    \b
      nerve chat --once "what is on my task list?"
      nerve chat --user asha --config nerve.yaml     # Ctrl-D or /quit ends
    """
    from nerve.assistant import Inbound
    from nerve.channels.terminal import TerminalChannel
    from nerve.channels.web_channel import for_user
    from nerve.server import build_app

    setup_logging(log_level)
    config = load(config_path)
    require_extras(config)
    config = config.model_copy(update={"admin": config.admin.model_copy(update={"enabled": False})})
    path = find_config_file(config_path, os.environ)
    app = build_app(config, config_path=path, channels=("terminal",))
    user = user_id or _default_user()

    async def run() -> None:
        async with app.api.router.lifespan_context(app.api):
            host = app.assistant  # the agent, its MCP servers and jobs, opened by the lifespan
            assert host.agent is not None
            if once is not None:
                # No terminal is left to show a reminder this sets: --once talks as the user's
                # web chat, so one fires in any open /chat tab of theirs on `nerve serve`.
                out = await host.agent.reply(Inbound("web", for_user(user), user, once))
                click.echo(out.text)
                for file in out.files:
                    click.echo(f"[file: {file}]")
                return

            async def reminders() -> str:
                jobs = host.jobs
                listed = await jobs.scheduler.list(user) if jobs is not None else []
                if not listed:
                    return "no reminders pending"
                return "\n".join(f"{j['next_run']}  {j['text']}  ({j['id']})" for j in listed)

            commands = {"/reminders": ("your pending reminders and jobs", reminders)}
            terminal = TerminalChannel(user_id=user, commands=commands)
            await terminal.start(host.bus)
            try:
                await terminal.converse()
            finally:
                await terminal.stop()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run())
