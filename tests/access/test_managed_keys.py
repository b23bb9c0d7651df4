"""Managed keys across processes: a key made by `nerve keys create` in one process is accepted
by a running `nerve serve` in another, and refused by it within a second of `nerve keys
revoke` — the keys live in the store, not in either process."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.fakes.upstream import FakeUpstream


def nerve(*args: str, config: Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "nerve", *args, "--config", str(config)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


def status_within(url: str, key: str, want: int, seconds: float) -> float:
    """Seconds until GET /stats with `key` answers `want` (polled under a deadline)."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        headers = {"authorization": f"Bearer {key}"} if key else {}
        r = httpx.get(f"{url}/stats", headers=headers, timeout=5)
        if r.status_code == want:
            return time.monotonic() - started
        time.sleep(0.05)  # polling a condition another process brings about, bounded
    raise AssertionError(f"/stats did not answer {want} within {seconds} s")


def test_a_key_made_and_revoked_by_the_cli_takes_effect_on_a_running_server(
    spawn, upstream: FakeUpstream, tmp_path: Path
):
    config = {
        "providers": [{"name": "primary", "protocol": "openai",
                       "base_url": upstream.openai_base_url, "api_key": "sk-test"}],
        "routes": [{"name": "default", "model": {"provider": "primary", "model": "m1"}}],
        "storage": {"url": f"sqlite:///{tmp_path / 'nerve.db'}"},
        "probes": {"interval_seconds": 0},
    }  # fmt: skip
    (server,) = spawn(config)
    path = tmp_path / "nerve.yaml"
    assert httpx.get(f"{server.url}/stats").status_code == 200  # no keys yet: open to loopback

    made = nerve("keys", "create", "--name", "laptop", "--users", "asha", config=path)
    assert made.returncode == 0, made.stderr
    key = made.stdout.strip()
    assert key and "only this once" in made.stderr
    status_within(server.url, "", 401, seconds=5)  # keys exist now: a key is needed
    assert (
        httpx.get(f"{server.url}/stats", headers={"authorization": f"Bearer {key}"}).status_code
        == 200
    )

    listed = nerve("keys", "list", config=path)
    assert "laptop" in listed.stdout and key not in listed.stdout and key[-4:] in listed.stdout

    revoked = nerve("keys", "revoke", "laptop", config=path)
    assert revoked.returncode == 0, revoked.stderr
    assert status_within(server.url, key, 401, seconds=3) < 1.5
    again = nerve("keys", "revoke", "laptop", config=path)
    assert again.returncode == 2 and "laptop" in again.stderr
