"""Real nerve processes for the tests that need more than one (SPEC ST: state lives in the stores).

    replica = Replica(config_path, cwd, workers=1)   # `nerve serve --port 0` in its own group
    Replica(config_path, cwd, 1, port=8081, env={...})  # a fixed port (a restart reuses it)
    replica.wait_ready()                             # /health answered 200
    replica.url, replica.log, replica.kill()         # kill(): SIGKILL, no shutdown at all
    replica.stop()                                   # SIGTERM (then SIGKILL), workers included

`spawn` (tests/conftest.py) writes a config file and starts replicas that are stopped at teardown.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path

import httpx

__all__ = ["Replica"]

_PR_SET_PDEATHSIG = 1


def _die_with_the_tests() -> None:
    """In the child, before exec: SIGTERM when the test process dies, however it dies (a CI
    timeout's SIGKILL included), so no replica outlives the run that started it (Linux)."""
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


class Replica:
    """One `nerve serve` process group; `url` once it printed where it listens."""

    def __init__(
        self, config: Path, cwd: Path, workers: int, *, port: int = 0,
        env: Mapping[str, str] | None = None,
    ) -> None:  # fmt: skip
        cwd.mkdir(exist_ok=True)
        cmd = [sys.executable, "-m", "nerve", "serve", "--config", str(config), "--port", str(port)]
        env = {**{k: v for k, v in os.environ.items() if k != "NERVE_CONFIG"}, **(env or {})}
        self.proc = subprocess.Popen(
            [*cmd, "--workers", str(workers), "--log-level", "info"],
            cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True, start_new_session=True,
            preexec_fn=_die_with_the_tests,
        )  # fmt: skip
        self.log: list[str] = []
        self.url = ""
        self.listening = threading.Event()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line)
            if "Uvicorn running on " in line:
                self.url = line.split("Uvicorn running on ", 1)[1].split()[0]
                self.listening.set()

    def wait_ready(self, timeout: float = 30) -> None:
        """Until /health answers 200 (the app has started), or fail with the log."""
        deadline = time.monotonic() + timeout
        assert self.listening.wait(timeout), "never listened:\n" + "".join(self.log[-30:])
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, "exited:\n" + "".join(self.log[-30:])
            try:
                if httpx.get(f"{self.url}/health", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.05)  # polling a readiness condition, bounded by the deadline
        raise AssertionError("no /health in time:\n" + "".join(self.log[-30:]))

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.reader.join(timeout=5)
        if self.proc.stderr is not None:
            self.proc.stderr.close()

    def kill(self) -> None:
        """SIGKILL the whole process group: no shutdown, nothing flushed (a crashed replica)."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
