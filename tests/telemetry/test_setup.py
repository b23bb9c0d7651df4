"""SPEC OB-1, starting up: `nerve serve` exports to the configured collector and flushes at exit;
without an endpoint nothing is imported; a bad endpoint or a missing extra stops start-up with
a message naming the key and the fix."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import openai
import pytest
import yaml

from nerve.config import parse_config
from nerve.errors import ConfigError
from nerve.hotreload import restart_required
from nerve.telemetry.lifecycle import traces_url
from tests.fakes.upstream import FakeUpstream
from tests.telemetry.collector import Collector

# Makes the OpenTelemetry SDK and exporter unimportable, as without `nerve[telemetry]`.
WITHOUT_EXTRA = """
import importlib.abc, sys
class Missing(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.startswith(("opentelemetry.sdk", "opentelemetry.exporter")):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Missing())
"""


def run(code: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", textwrap.dedent(code), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=cwd)


def test_nerve_serve_exports_a_trace_and_flushes_it_at_exit(
    spawn: Callable[..., list], otlp: Collector, upstream: FakeUpstream, client_traceparent
) -> None:
    header, trace_id, client_span = client_traceparent
    (replica,) = spawn({
        "providers": [{"name": "primary", "protocol": "openai",
                       "base_url": upstream.openai_base_url, "api_key": "sk-test"}],
        "routes": [{"name": "default", "model": {"provider": "primary", "model": "m1"}}],
        "telemetry": {"otlp_endpoint": otlp.url, "service_name": "nerve-replica",
                      "headers": {"x-collector-token": "t0k"}},
    })  # fmt: skip
    with openai.OpenAI(base_url=f"{replica.url}/v1", api_key="k", max_retries=0,
                       default_headers={"traceparent": header}) as client:  # fmt: skip
        client.chat.completions.create(model="auto", messages=[{"role": "user", "content": "hi"}])
    assert otlp.spans == []  # batched: nothing is sent on the request's path
    replica.stop()  # SIGTERM: the lifespan flushes on the way out

    http, call = otlp.one("POST /v1/chat/completions"), otlp.one("chat m1")
    assert http.trace_id == call.trace_id == trace_id and http.parent_id == client_span
    assert call.parent_id == http.span_id and call.attributes["gen_ai.usage.input_tokens"] > 0
    assert http.resource["service.name"] == "nerve-replica"
    assert otlp.posts and all(post["x-collector-token"] == "t0k" for post in otlp.posts)


def test_without_an_endpoint_opentelemetry_is_never_imported(tmp_path: Path) -> None:
    done = run("""
        import asyncio, sys
        from nerve.config import parse_config
        from nerve.server import build_app
        from nerve.telemetry import active

        app = build_app(parse_config({}, environ={}))
        async def main():
            async with app.api.router.lifespan_context(app.api):
                assert active.tracing is None
        asyncio.run(main())
        print(sorted(m for m in sys.modules if m.startswith(("opentelemetry.sdk",
                                                             "opentelemetry.exporter"))))
    """, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_an_endpoint_without_the_extra_stops_start_up_naming_the_install(
    tmp_path: Path, otlp: Collector
) -> None:
    config = tmp_path / "nerve.yaml"
    config.write_text(yaml.safe_dump({"telemetry": {"otlp_endpoint": otlp.url}}))
    done = run(WITHOUT_EXTRA + """
from nerve.cli import main
from nerve.errors import ConfigError
from nerve.config import load_config
from nerve.telemetry import start_tracing
try:  # what the server's lifespan does, for a worker started without `nerve serve`'s check
    start_tracing(load_config(sys.argv[1]).telemetry)
except ConfigError as e:
    print("lifespan:", e.message)
sys.argv = ["nerve", "serve", "--config", sys.argv[1], "--port", "0"]
main()
""", str(config), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1, done.stderr
    why = "telemetry.otlp_endpoint: set, but the OpenTelemetry packages"
    assert f"lifespan: {why}" in done.stdout and "pip install 'nerve[telemetry]'" in done.stdout
    assert f"nerve: {why}" in done.stderr and "pip install 'nerve[telemetry]'" in done.stderr
    assert "Traceback" not in done.stderr and "Uvicorn running" not in done.stderr


@pytest.mark.parametrize("command", [["mcp"], ["chat", "--once", "hi"]], ids=["mcp", "chat"])
def test_every_command_that_runs_nerve_names_the_missing_extra(
    tmp_path: Path, otlp: Collector, command: list[str]
) -> None:
    config = tmp_path / "nerve.yaml"
    config.write_text(yaml.safe_dump({"telemetry": {"otlp_endpoint": otlp.url}}))
    done = run(WITHOUT_EXTRA + """
from nerve.cli import main
sys.argv = ["nerve", *sys.argv[2:], "--config", sys.argv[1]]
main()
""", str(config), *command, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "pip install 'nerve[telemetry]'" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "endpoint",
    [
        "collector:4318",
        "http://",
        "http://collector:otlp",
        "ftp://collector:4318",
        "https://collector:99999",
    ],
)
def test_a_bad_otlp_endpoint_is_a_config_error_naming_the_key(endpoint: str) -> None:
    with pytest.raises(ConfigError) as bad:
        parse_config({"telemetry": {"otlp_endpoint": endpoint}}, environ={})
    assert bad.value.message.startswith("telemetry.otlp_endpoint: ")
    assert repr(endpoint) in bad.value.message and "http://collector:4318" in bad.value.message


def test_the_traces_path_is_added_to_a_collectors_base_url_once() -> None:
    assert traces_url("http://collector:4318") == "http://collector:4318/v1/traces"
    assert traces_url("http://collector:4318/") == "http://collector:4318/v1/traces"
    assert traces_url("https://otel.example/v1/traces") == "https://otel.example/v1/traces"
    assert traces_url("http://gw/otlp") == "http://gw/otlp/v1/traces"


def test_changing_telemetry_is_reported_as_needing_a_restart() -> None:
    old = parse_config({}, environ={})
    new = parse_config({"telemetry": {"otlp_endpoint": "http://127.0.0.1:4318"}}, environ={})
    assert restart_required(old, new) == ["telemetry"]
