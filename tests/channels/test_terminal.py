"""The terminal channel and `nerve chat` (issue 7): a REPL on stdin/stdout and `--once TEXT`,
end to end in a subprocess against the fake upstream, tools and memory included."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nerve.assistant import Bus, Outbound
from nerve.assistant.build import assistant_from_app
from nerve.channels.terminal import TerminalChannel
from nerve.server import build_app
from nerve.tools import ToolRegistry
from tests.conftest import make_config
from tests.fakes.upstream import FakeUpstream, Reply

CONFIG = """\
providers:
  - {{name: primary, base_url: {url}, api_key: sk-test}}
routes:
  - {{name: default, model: {{provider: primary, model: m1}}}}
probes: {{interval_seconds: 0}}
server: {{config_poll_seconds: 0}}
"""


def nerve_chat(tmp_path: Path, upstream: FakeUpstream, *args: str, stdin: str = "") -> str:
    config = tmp_path / "nerve.yaml"
    config.write_text(CONFIG.format(url=upstream.openai_base_url))
    env = {k: v for k, v in os.environ.items() if not k.startswith("NERVE_")}
    env["NERVE_ADMIN_PASSWORD"] = "terminal-tests-password"
    done = subprocess.run(
        [sys.executable, "-m", "nerve", "chat", "--config", str(config), *args],
        input=stdin, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_chat_once_runs_a_tool_and_prints_the_final_answer(
    tmp_path: Path, upstream: FakeUpstream
) -> None:
    upstream.script(
        Reply(tool_calls=[{"id": "t1", "function": {"name": "task",
                            "arguments": {"action": "add", "title": "buy milk"}}}]),
        Reply(text="Added 'buy milk' to your tasks."),
    )  # fmt: skip
    out = nerve_chat(tmp_path, upstream, "--once", "add buy milk to my tasks", "--user", "asha")
    assert out == "Added 'buy milk' to your tasks.\n"
    first, second = upstream.wait_for_requests(2)
    assert "task" in [t["function"]["name"] for t in first.body["tools"]]
    assert '"title": "buy milk"' in second.body["messages"][-1]["content"]

    # A second process: the turn and the open task come back from memory.
    upstream.script(Reply(text="You have one task: buy milk."))
    out = nerve_chat(tmp_path, upstream, "--once", "what is on my list?", "--user", "asha")
    assert out == "You have one task: buy milk.\n"
    third = upstream.wait_for_requests(3)[2].body["messages"]
    assert "- buy milk (id " in third[0]["content"]
    assert third[1] == {"role": "user", "content": "add buy milk to my tasks"}


def test_chat_without_once_converses_on_stdin_until_eof(
    tmp_path: Path, upstream: FakeUpstream
) -> None:
    upstream.script(Reply(text="Hi!"), Reply(text="Still here."))
    out = nerve_chat(tmp_path, upstream, stdin="hello\n\nare you there?\n")
    assert out == "Hi!\nStill here.\n"
    second = upstream.wait_for_requests(2)[1].body["messages"]
    assert [m["content"] for m in second[1:]] == ["hello", "Hi!", "are you there?"]


async def test_the_terminal_channel_waits_for_each_reply_and_prints_deliveries(
    upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NERVE_ADMIN_PASSWORD", "terminal-tests-password")
    app = build_app(make_config({"primary": upstream}, probes={"interval_seconds": 0}))
    lines = iter(["one\n", "/quit\n", "never read\n"])
    written: list[str] = []
    three = asyncio.Event()

    def write(text: str) -> None:
        written.append(text)
        if len(written) >= 3:
            three.set()

    async def read_line() -> str | None:
        return next(lines, None)

    upstream.script(Reply(text="first answer"))
    async with app.api.router.lifespan_context(app.api):
        bus = Bus()
        terminal = TerminalChannel(
            user_id="asha", read_line=read_line, write=write, interactive=False
        )
        serving = asyncio.create_task(assistant_from_app(app, tools=ToolRegistry()).run(bus))
        await terminal.start(bus)
        await terminal.converse()
        assert written == ["first answer"]
        await bus.deliver(Outbound("terminal", "terminal", "Reminder: tea", files=("/tmp/a",)))
        await terminal.send(Outbound("terminal", "terminal", kind="typing"))
        async with asyncio.timeout(10):  # the channel's own task prints what the bus delivers
            await three.wait()
        assert written[1:] == ["Reminder: tea", "[file: /tmp/a]"]
        await terminal.stop()
        serving.cancel()
        with pytest.raises(asyncio.CancelledError):
            await serving


async def test_local_commands_stay_local_and_a_delivery_redraws_the_prompt(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bus = Bus()  # nothing answers on it: a line that reached the model would wait forever
    lines: asyncio.Queue[str | None] = asyncio.Queue()
    printed: list[str] = []
    enough = asyncio.Event()
    wanted = 3

    def write(text: str) -> None:
        printed.append(text)
        sys.stdout.write(text + "\n")
        if len(printed) >= wanted:
            enough.set()

    async def reminders() -> str:
        return "2026-12-05T18:00:00+00:00  call Asha  (j1)"

    terminal = TerminalChannel(
        user_id="asha", read_line=lines.get, write=write, interactive=True,
        commands={"/reminders": ("your pending reminders", reminders)},
    )  # fmt: skip
    await terminal.start(bus)
    talking = asyncio.create_task(terminal.converse())
    for line in ("/help\n", "/reminders\n", "/nope\n"):
        await lines.put(line)
    async with asyncio.timeout(10):
        await enough.wait()
    assert printed[0].splitlines()[0].startswith("/help")
    assert "/reminders   your pending reminders" in printed[0]
    assert printed[1:] == [
        "2026-12-05T18:00:00+00:00  call Asha  (j1)",
        "unknown command /nope; /help lists them (a message may not start with /)",
    ]
    capsys.readouterr()
    enough.clear()
    wanted = 4
    await bus.deliver(Outbound("terminal", "terminal", "Reminder: tea"))
    async with asyncio.timeout(10):
        await enough.wait()
    assert capsys.readouterr().out == "\rnerve> Reminder: tea\nyou> "
    await lines.put(None)
    async with asyncio.timeout(10):
        await talking
    await terminal.stop()


def test_nerve_chat_prints_no_log_lines_unless_asked(tmp_path: Path) -> None:
    config = tmp_path / "nerve.yaml"
    config.write_text(
        "providers:\n  - {name: p, base_url: 'http://127.0.0.1:9/v1', api_key: '${UNSET_KEY}'}\n"
        "routes:\n  - {name: default, model: {provider: p, model: m}}\n"
        "probes: {interval_seconds: 0}\nserver: {config_poll_seconds: 0}\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("NERVE_") and k != "UNSET_KEY"}

    def chat(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "nerve", "chat", "--config", str(config), *args],
            input="/quit\n", capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60,
        )  # fmt: skip

    quiet = chat()
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr  # no key warning, no admin
    loud = chat("--log-level", "warning")
    assert "provider p has no API key ($UNSET_KEY is not set)" in loud.stderr
