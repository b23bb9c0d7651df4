"""The files of deploy/ say what nerve really accepts (issue 19, "Many machines"): the replica's
config loads with nerve's own loader and builds an app, its variables are the ones the
environment file lists, the balancer checks /ready and retries only what is safe to retry, and
the systemd unit runs that config with that environment. (`haproxy -c` and `systemd-analyze
verify` accept the files too; they are not on every machine, so they are not run here.)"""

from __future__ import annotations

import re

import pytest

from nerve.config import is_loopback, load_config
from nerve.errors import ConfigError
from nerve.server import build_app
from tests.deploy.topology import DEPLOY

VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}")


def example_environ() -> dict[str, str]:
    """deploy/nerve.env.example's assignments (its commented ones left out)."""
    found = {}
    for line in (DEPLOY / "nerve.env.example").read_text().splitlines():
        if line and not line.startswith("#") and "=" in line:
            name, _, value = line.partition("=")
            found[name] = value
    return found


def test_the_replica_config_loads_and_builds_with_the_example_environment() -> None:
    environ = example_environ()
    config = load_config(str(DEPLOY / "nerve.yaml"), environ)
    assert config.storage.url == environ["NERVE_DATABASE_URL"]
    assert config.storage.url.startswith("postgresql://") and not config.memory.wal.enabled
    assert config.redis.url == environ["NERVE_REDIS_URL"] and config.redis.key_prefix == "nerve:"
    assert not is_loopback(config.server.host) and config.server.api_keys  # serve insists
    budgeted = [k for k in config.server.api_keys if k.budget is not None]
    assert {k.name for k in budgeted} == {"app", "ci"}
    targets = {str(t) for route in config.routes for t in route.targets}
    assert targets <= set(config.prices), "a budgeted key may use priced models only"
    assert config.admin.enabled and config.admin.event_log is None  # the shared table
    build_app(config)  # what `nerve serve` builds before it opens anything


def test_every_variable_the_config_needs_is_in_the_environment_file() -> None:
    needed = {m.group(1) for m in VAR.finditer((DEPLOY / "nerve.yaml").read_text()) if not m[2]}
    assert needed <= set(example_environ()), needed - set(example_environ())


@pytest.mark.parametrize(
    ("unset", "path"),
    [("NERVE_APP_KEY", "server.api_keys[0].key"), ("NERVE_CI_KEY", "server.api_keys[1].key")],
)
def test_an_unset_key_stops_start_up_naming_it(unset: str, path: str) -> None:
    environ = {k: v for k, v in example_environ().items() if k != unset}
    with pytest.raises(ConfigError) as raised:
        load_config(str(DEPLOY / "nerve.yaml"), environ)
    assert raised.value.path == path


def test_an_unset_database_url_stops_start_up_naming_storage_url() -> None:
    environ = {k: v for k, v in example_environ().items() if k != "NERVE_DATABASE_URL"}
    with pytest.raises(ConfigError) as raised:
        build_app(load_config(str(DEPLOY / "nerve.yaml"), environ))
    assert raised.value.path == "storage.url"


def test_the_balancer_checks_ready_and_retries_only_failed_connections() -> None:
    haproxy = (DEPLOY / "haproxy.cfg").read_text()
    lines = [line.split("#", 1)[0].strip() for line in haproxy.splitlines()]
    assert "http-check send meth GET uri /ready ver HTTP/1.1 hdr Host nerve" in lines
    assert "http-check expect status 200" in lines
    assert "retry-on conn-failure" in lines  # nothing sent yet: safe for a POST
    assert "http-request set-header X-Forwarded-Proto https if { ssl_fc }" in lines
    port = load_config(str(DEPLOY / "nerve.yaml"), example_environ()).server.port
    servers = [line for line in lines if line.startswith("server ")]
    assert len(servers) >= 2 and all(line.endswith(f":{port}") for line in servers)


def test_the_unit_serves_the_config_with_the_environment_file() -> None:
    unit = (DEPLOY / "nerve.service").read_text().splitlines()
    assert "EnvironmentFile=/etc/nerve/nerve.env" in unit
    assert "ExecStart=/opt/nerve/.venv/bin/nerve serve --config /etc/nerve/nerve.yaml" in unit
    assert "KillSignal=SIGTERM" in unit and "Restart=always" in unit
