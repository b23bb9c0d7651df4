"""The terminal channel: `nerve chat`, a conversation on stdin/stdout.

Each line read is one `Inbound` on the bus; the channel waits for its reply before reading the
next line, and prints anything else the bus routes to "terminal" (a reminder firing) when it
comes; on a terminal the prompt is drawn again after it. Prompts and the typing indicator
appear only on a terminal, so piped output is just the answers. Lines starting with `/` are
the terminal's own commands, never sent to the model: /help, /quit (or EOF, Ctrl-D), and those
the caller adds (`nerve chat` adds /reminders).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Mapping

from nerve.assistant.bus import Inbound, Outbound
from nerve.channels.base import BusFed

__all__ = ["TerminalChannel"]

ReadLine = Callable[[], Awaitable[str | None]]
Command = Callable[[], Awaitable[str]]  # a local command: what it prints
PROMPT = "you> "


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
        commands: Mapping[str, tuple[str, Command]] | None = None,
    ) -> None:
        self.user_id = user_id
        self.commands = dict(commands or {})  # "/name" -> (what it does, what it prints)
        self._prompting = False  # the prompt is on screen, waiting for a line
        self.chat_id = chat_id
        self.read_line = read_line
        self.write = write
        self.interactive = sys.stdin.isatty() if interactive is None else interactive
        self._waiting: dict[str, asyncio.Event] = {}

    def reaches(self, chat_id: str) -> bool:
        return chat_id == self.chat_id  # this terminal's conversation, while it runs

    async def send(self, out: Outbound) -> None:
        if out.kind == "delta":
            return  # the whole reply follows; a terminal line is printed once
        if out.kind == "typing":
            if self.interactive:
                sys.stderr.write("nerve is typing…\n")
                sys.stderr.flush()
            return
        prefix = "nerve> " if self.interactive else ""
        redraw = self.interactive and self._prompting
        if redraw:
            sys.stdout.write("\r")  # over the waiting prompt, then draw it again below
        self.write(prefix + out.text)
        for path in out.files:
            self.write(f"[file: {path}]")
        if redraw:
            sys.stdout.write(PROMPT)
            sys.stdout.flush()
        if out.reply_to is not None and out.reply_to in self._waiting:
            self._waiting.pop(out.reply_to).set()

    async def converse(self) -> None:
        """Read lines until EOF or /quit; each waits for its reply."""
        if self.bus is None:
            raise RuntimeError("start the terminal channel before conversing")
        while True:
            if self.interactive:
                sys.stdout.write(PROMPT)
                sys.stdout.flush()
            self._prompting = True
            try:
                line = await self.read_line()
            finally:
                self._prompting = False
            if line is None or line.strip() in ("/quit", "/exit"):
                return
            if not line.strip():
                continue
            if line.startswith("/"):
                self.write(await self._local(line.strip()))
                continue
            msg = Inbound(self.name, self.chat_id, self.user_id, line.rstrip("\n"))
            answered = self._waiting[msg.id] = asyncio.Event()
            await self.bus.publish(msg)
            await answered.wait()

    async def _local(self, line: str) -> str:
        name = line.split()[0]
        if name == "/help":
            listed = [("/help", "this list"), ("/quit", "end the chat (or Ctrl-D)")]
            listed += [(n, what) for n, (what, _) in sorted(self.commands.items())]
            return "\n".join(f"{n:<12} {what}" for n, what in listed)
        found = self.commands.get(name)
        if found is None:
            return f"unknown command {name}; /help lists them (a message may not start with /)"
        return await found[1]()
