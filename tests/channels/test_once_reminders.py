"""A reminder set by `nerve chat --once` (a process that exits at once) fires from a running
`nerve serve` in an open /chat tab of that user; a tab of another user never sees it. Two real
processes on one store: the server here on a real socket, `nerve chat` as a subprocess."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import aiohttp
import pytest

from nerve.config import load_config
from nerve.server import build_app
from tests.conftest import RunningServer
from tests.fakes.upstream import FakeUpstream, Reply

CONFIG = """\
providers:
  - {{name: primary, base_url: "{url}", api_key: sk-test}}
routes:
  - {{name: default, model: {{provider: primary, model: m1}}}}
storage: {{url: "sqlite:///{db}"}}
assistant: {{jobs: {{poll_seconds: 0.2}}}}
probes: {{interval_seconds: 0}}
server: {{config_poll_seconds: 0}}
"""


async def test_a_once_reminder_fires_in_the_users_open_tab_on_the_server(
    tmp_path: Path, upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NERVE_ADMIN_PASSWORD", "once-tests-password")
    config = tmp_path / "nerve.yaml"
    config.write_text(CONFIG.format(url=upstream.openai_base_url, db=tmp_path / "nerve.db"))
    server = RunningServer(build_app(load_config(str(config)))).start()
    try:
        tab = f"{server.url}/chat/ws?chat="
        async with aiohttp.ClientSession() as http, http.ws_connect(
            f"{tab}tab1&user=asha"
        ) as asha, http.ws_connect(f"{tab}tab2&user=ravi") as ravi:  # fmt: skip
            for ws in (asha, ravi):
                assert (await ws.receive_json(timeout=10))["kind"] == "hello"
            due = (datetime.now(UTC) + timedelta(seconds=1)).isoformat(timespec="seconds")
            call = {
                "name": "reminder",
                "arguments": {"action": "add", "text": "stretch", "at": due},
            }
            upstream.script(Reply(tool_calls=[{"id": "r1", "function": call}]),
                            Reply(text="I will remind you to stretch."))  # fmt: skip
            env = {k: v for k, v in os.environ.items() if not k.startswith("NERVE_")}
            done = await asyncio.to_thread(
                subprocess.run,
                [sys.executable, "-m", "nerve", "chat", "--config", str(config),
                 "--once", "remind me in a second to stretch", "--user", "asha"],
                capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
            assert done.stdout == "I will remind you to stretch.\n"
            fired = await asha.receive_json(timeout=15)  # the server's scheduler, not the CLI
            assert fired["kind"] == "message" and fired["text"].startswith("⏰ Reminder: stretch")
            assert fired["chat_id"] == "user:asha" and fired["id"]
            upstream.script(Reply(text="Hi Ravi."))
            await ravi.send_json({"text": "hi"})  # what ravi's tab gets next is its own turn
            assert (await ravi.receive_json(timeout=10))["kind"] == "typing"
    finally:
        server.stop()
