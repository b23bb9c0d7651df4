"""deploy/ on loopback: `nerve serve` replicas run from deploy/nerve.yaml on one PostgreSQL
schema and one Redis prefix, fake model providers at the network edge, the test balancer
(tests/fakes/balancer.py) in front: what tests/deploy/test_soak.py and bench/soak_replicas.py
start.

    topology = Topology(tmp, storage_url=..., redis_url=..., prefix=..., chat=up, assistant=up2)
    await topology.start(replicas=2)     # both in the balancer's rotation
    topology.kill(1)                     # SIGKILL: no shutdown at all
    await topology.restart(1)            # the same port, back in rotation
    await topology.stop()

The replicas' config is the recipe's file with its ${VARS} set (`environ`) and only these
sections replaced (`soak_config`): server.host (loopback), the prices (binary fractions of a
dollar, so every sum of costs is exact), one more route for the assistant (its own fake, so
its scripted turns never mix with the chat traffic), probes off, and the assistant's jobs
polled fast. The keys, limits, storage, Redis, memory and admin sections are the recipe's.
The budgeted key is a managed one, made with `nerve keys create` before any replica starts.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from tests.fakes.balancer import Backend, Balancer
from tests.fakes.upstream import FakeUpstream
from tests.processes import Replica

__all__ = ["CALL_USD", "DEPLOY", "Topology", "soak_config"]

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
TOKEN_USD = 2.0**-10  # $/token at 976.5625 $/M: a call of 18 tokens costs 18/1024 exactly
CALL_USD = 18 * TOKEN_USD
PRICE = {"input": TOKEN_USD * 1e6, "output": TOKEN_USD * 1e6}
APP_KEY = "nerve-soak-app-key"
CI_KEY = "nerve-soak-ci-key"
ADMIN_PASSWORD = "nerve-soak-admin-password"
READY_SECONDS = 60


def soak_config() -> dict[str, Any]:
    config: dict[str, Any] = yaml.safe_load((DEPLOY / "nerve.yaml").read_text())
    config["server"]["host"] = "127.0.0.1"  # tests listen on loopback only
    config["prices"] = {target: PRICE for target in config["prices"]}
    assistant = {"provider": "anthropic", "model": "claude-haiku-4-5"}
    config["routes"].append({"name": "assistant", "model": assistant})
    config["probes"] = {"interval_seconds": 0}  # a probe would take a scripted reply
    config["assistant"] = {"model": "assistant", "history_turns": 1000,
                           "jobs": {"poll_seconds": 0.3, "lease_seconds": 3}}  # fmt: skip
    return config


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Topology:
    def __init__(
        self, tmp: Path, *, storage_url: str, redis_url: str, prefix: str, chat: FakeUpstream,
        assistant: FakeUpstream, budget_calls: int,
    ) -> None:  # fmt: skip
        self.tmp = tmp
        self.config = tmp / "nerve.yaml"
        self.config.write_text(yaml.safe_dump(soak_config(), sort_keys=False))
        self.environ = {
            "NERVE_DATABASE_URL": storage_url, "NERVE_REDIS_URL": redis_url,
            "NERVE_REDIS_PREFIX": prefix, "NERVE_APP_KEY": APP_KEY, "NERVE_CI_KEY": CI_KEY,
            "NERVE_ADMIN_PASSWORD": ADMIN_PASSWORD, "FORWARDED_ALLOW_IPS": "127.0.0.1",
            "OPENAI_BASE_URL": chat.openai_base_url, "OPENAI_API_KEY": "sk-soak",
            "ANTHROPIC_BASE_URL": assistant.anthropic_base_url, "ANTHROPIC_API_KEY": "sk-ant-soak",
        }  # fmt: skip
        self.budget_calls = budget_calls
        self.budget_usd = budget_calls * CALL_USD
        self.budget_key = ""
        self.replicas: list[Replica] = []
        self.ports: list[int] = []
        self.balancer: Balancer | None = None
        self.started = 0  # processes started, restarts included (each its own directory)

    @property
    def app_key(self) -> str:
        return APP_KEY

    @property
    def ci_key(self) -> str:
        return CI_KEY

    def backend(self, i: int) -> Backend:
        return ("127.0.0.1", self.ports[i])

    def url(self, i: int) -> str:
        return f"http://127.0.0.1:{self.ports[i]}"

    async def start(self, replicas: int = 2) -> Balancer:
        self.budget_key = await asyncio.to_thread(self._create_budget_key)
        self.ports = [free_port() for _ in range(replicas)]
        self.replicas = [self._spawn(port) for port in self.ports]
        self.balancer = await Balancer([self.backend(i) for i in range(replicas)]).start()
        await self.in_rotation(*range(replicas))
        return self.balancer

    async def in_rotation(self, *indexes: int) -> None:
        """Until the balancer has these replicas in rotation; fails with their logs after
        READY_SECONDS (a start-up takes ~2 s here, more on a loaded machine)."""
        balancer = self.balancer
        assert balancer is not None
        try:
            async with asyncio.timeout(READY_SECONDS):
                await balancer.wait_for(lambda: all(balancer.up[self.backend(i)] for i in indexes))
        except TimeoutError:
            logs = "".join(line for i in indexes for line in self.replicas[i].log[-20:])
            raise AssertionError(f"replicas {indexes} not ready in time:\n{logs}") from None

    def kill(self, i: int) -> None:
        self.replicas[i].kill()

    async def restart(self, i: int) -> Replica:
        """A new process on replica i's port (the old one must be gone)."""
        assert self.replicas[i].proc.poll() is not None, "replica is still running"
        self.replicas[i].stop()  # its log reader
        self.replicas[i] = self._spawn(self.ports[i])
        return self.replicas[i]

    async def stop(self) -> None:
        if self.balancer is not None:
            await self.balancer.stop()
        await asyncio.gather(*(asyncio.to_thread(r.stop) for r in self.replicas))

    def _spawn(self, port: int) -> Replica:
        self.started += 1
        return Replica(self.config, self.tmp / f"r{self.started}", 1, port=port, env=self.environ)

    def _create_budget_key(self) -> str:
        """`nerve keys create`, as an operator would: a managed key with a `total` budget of
        exactly `budget_calls` calls, kept (hashed) in PostgreSQL."""
        env = {**os.environ, **self.environ}
        env.pop("NERVE_CONFIG", None)
        made = subprocess.run(
            [sys.executable, "-m", "nerve", "keys", "create", "--name", "budget", "--routes",
             "default", "--budget", f"{self.budget_usd!r}/total", "--config", str(self.config)],
            env=env, cwd=self.tmp, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert made.returncode == 0, made.stderr
        return made.stdout.strip()
