"""The terminal channel: `nerve chat`, a conversation on stdin/stdout.

Each line read is one `Inbound` on the bus; the channel waits for its reply before reading the
next line, and prints anything else the bus routes to "terminal" (a reminder firing) when it
comes. Prompts and the typing indicator appear only on a terminal, so piped output is just
the answers. End with EOF (Ctrl-D) or /quit.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable

from nerve.assistant.bus import Inbound, Outbound
from nerve.channels.base import BusFed

__all__ = ["TerminalChannel"]

ReadLine = Callable[[], Awaitable[str | None]]


async def _stdin_line() -> str | None:
    line = await asyncio.to_thread(sys.stdin.readline)
    return line if line else None  # "" is EOF; an empty line is "\n"


def _stdout(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


class TerminalChannel(BusFed):
    name = "terminal"

    def __init__(
        self,
        *,
        user_id: str,
        chat_id: str = "terminal",
        read_line: ReadLine = _stdin_line,
        write: Callable[[str], None] = _stdout,
        interactive: bool | None = None,
    ) -> None:
        self.user_id = user_id
        self.chat_id = chat_id
        self.read_line = read_line
        self.write = write
        self.interactive = sys.stdin.isatty() if interactive is None else interactive
        self._waiting: dict[str, asyncio.Event] = {}

    def reaches(self, chat_id: str) -> bool:
        return chat_id == self.chat_id  # this terminal's conversation, while it runs

    async def send(self, out: Outbound) -> None:
        if out.kind == "typing":
            if self.interactive:
                sys.stderr.write("nerve is typing…\n")
                sys.stderr.flush()
            return
        prefix = "nerve> " if self.interactive else ""
        self.write(prefix + out.text)
        for path in out.files:
            self.write(f"[file: {path}]")
        if out.reply_to is not None and out.reply_to in self._waiting:
            self._waiting.pop(out.reply_to).set()

    async def converse(self) -> None:
        """Read lines until EOF or /quit; each waits for its reply."""
        if self.bus is None:
            raise RuntimeError("start the terminal channel before conversing")
        while True:
            if self.interactive:
                sys.stdout.write("you> ")
                sys.stdout.flush()
            line = await self.read_line()
            if line is None or line.strip() in ("/quit", "/exit"):
                return
            if not line.strip():
                continue
            msg = Inbound(self.name, self.chat_id, self.user_id, line.rstrip("\n"))
            answered = self._waiting[msg.id] = asyncio.Event()
            await self.bus.publish(msg)
            await answered.wait()
