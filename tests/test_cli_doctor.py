"""`nerve doctor` checks a config end to end against real parts (a fake upstream on loopback, a
closed port, SQLite, the real Redis) and says what to fix; exit 1 when anything needs it."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from nerve.cli import cli
from tests.fakes.upstream import FakeUpstream
from tests.gateway.conftest import redis_url  # noqa: F401 - the real Redis, or a skip
from tests.telemetry.collector import Collector

CONFIG = """\
providers:
  - {{name: up, base_url: "{up}", api_key: sk-x}}
  - {{name: down, base_url: "http://127.0.0.1:1/v1", api_key: sk-x}}
  - {{name: nokey, base_url: "https://api.example.com/v1", api_key: "${{NERVE_DOCTOR_UNSET}}"}}
routes:
  - {{name: default, model: {{provider: up, model: m1}}}}
storage: {{url: "sqlite:///{db}"}}
redis: {{url: "{redis}"}}
"""


def doctor(
    tmp_path: Path, up: FakeUpstream, redis: str
) -> tuple[int, dict[str, dict[str, object]]]:
    config = tmp_path / "nerve.yaml"
    config.write_text(CONFIG.format(up=up.openai_base_url, db=tmp_path / "n.db", redis=redis))
    result = CliRunner().invoke(
        cli, ["doctor", "--config", str(config), "--json"], env={"NERVE_DOCTOR_UNSET": ""}
    )
    checks = {c["check"].split(" (")[0]: c for c in json.loads(result.output)["checks"]}
    return result.exit_code, checks


def test_doctor_says_what_to_fix_and_what_is_fine(
    tmp_path: Path,
    upstream: FakeUpstream,
    redis_url: str,  # noqa: F811
) -> None:
    code, checks = doctor(tmp_path, upstream, redis_url)
    assert code == 1
    assert checks["config"]["ok"] and checks["provider up"]["ok"]
    assert not checks["provider down"]["ok"]
    assert "check base_url" in str(checks["provider down"]["detail"])
    assert checks["provider nokey"]["detail"] == "no API key: $NERVE_DOCTOR_UNSET is not set"
    store = next(c for name, c in checks.items() if name.startswith("store sqlite"))
    assert store["ok"] and (tmp_path / "n.db").exists()
    redis = next(c for name, c in checks.items() if name.startswith("redis "))
    assert redis["ok"] and redis["detail"] == "answers PING"
    assert {"voice tts", "voice stt"} <= checks.keys()
    assert any(r.path == "/v1/models" for r in upstream.requests)


def test_doctor_on_an_unreachable_redis_and_a_bad_config(
    tmp_path: Path, upstream: FakeUpstream
) -> None:
    code, checks = doctor(tmp_path, upstream, "redis://127.0.0.1:1/0")
    redis = next(c for name, c in checks.items() if name.startswith("redis "))
    assert code == 1 and not redis["ok"] and "is Redis running there?" in str(redis["detail"])
    bad = tmp_path / "bad.yaml"
    bad.write_text("servr: {}\nmemry: {}\n")
    result = CliRunner().invoke(cli, ["doctor", "--config", str(bad)])
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        "fix  config servr: unknown key; did you mean server?",
        "fix  config memry: unknown key; did you mean memory?",
    ]


def test_doctor_sends_the_trace_collector_an_empty_export(tmp_path: Path) -> None:
    def run(endpoint: str) -> dict[str, object]:
        config = tmp_path / "traced.yaml"
        config.write_text(
            f'telemetry: {{otlp_endpoint: "{endpoint}", headers: {{x-token: t0k}}}}\n'
            f'storage: {{url: "sqlite:///{tmp_path / "t.db"}"}}\n'
        )
        result = CliRunner().invoke(cli, ["doctor", "--config", str(config), "--json"])
        (check,) = [c for c in json.loads(result.output)["checks"] if c["check"].startswith("tele")]
        return check

    with Collector() as otlp:
        up = run(otlp.url)
        assert up["ok"] and up["check"] == f"telemetry {otlp.url}/v1/traces"
        assert otlp.spans == [] and otlp.posts[0]["x-token"] == "t0k"  # no span was made
    down = run("http://127.0.0.1:1")
    assert not down["ok"] and "is the collector running" in str(down["detail"])
