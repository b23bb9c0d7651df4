"""SPEC RL-1: every operation of the OpenAPI document, fuzzed by schemathesis against a real
server on a real socket, answers as the document says: never a 5xx, only documented status
codes, bodies of the documented shape, schema-valid input accepted and invalid input refused.

The document is the one the server serves (/openapi.json), so what is checked is what clients
are generated from. Model calls go to a fake upstream on loopback (tests/fakes/upstream.py).
Agent endpoints are the one rewrite: a generated host name would be resolved, and DNS is the
network edge, so every generated endpoint is pointed at 127.0.0.1 (the guard's own rules are
tested in tests/agents/test_ssrf.py). Left out: /admin (its own login, tests/admin) and the
chat WebSocket (not in the document). Bounded and deterministic: a fixed number of examples
per operation, derandomized, no shrinking.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from schemathesis import Case
from schemathesis.hooks import GLOBAL_HOOK_DISPATCHER

from nerve.config import parse_config
from nerve.server import build_app
from tests.conftest import RunningServer, make_config
from tests.fakes.upstream import FakeUpstream

EXAMPLES = 10  # per operation, on top of the coverage phase's boundary cases

# Schema-valid input these operations still refuse, 400, and why: what their documents do not
# state (yet), or cannot (the bytes of a WAV file).
POSITIVE_ALSO = {
    "POST /api/voice/synthesize": ["400"],  # empty text: "there is nothing to say"
    "POST /api/voice/transcribe": ["400"],  # a file that is not a WAV
    # A message list the schema calls valid may still not be a chat request (roles, content).
    "POST /parallel": ["400"],
    "POST /task": ["400"],
    "POST /analysis": ["400"],
}

CONFIG = schemathesis.Config.from_dict(
    {
        "generation": {"max-examples": EXAMPLES, "deterministic": True, "no-shrink": True},
        "continue-on-failure": True,
        # Off until server.py answers a 405 with every method of the path in `Allow` (Starlette
        # lists only those of the first route matching it: OPTIONS /api/agents says POST).
        "checks": {"allow_header_conformance": {"enabled": False}},
        "phases": {"stateful": {"enabled": False}},
        "operations": [
            {
                "include-name": name,
                "checks": {
                    "positive_data_acceptance": {
                        "expected-statuses": ["2xx", "401", "403", "404", "409", "429", *also]
                    }
                },
            }
            for name, also in POSITIVE_ALSO.items()
        ],
    }
)
_HOST = re.compile(r"^([A-Za-z]+://)[^/?#]*")


def _document() -> dict[str, Any]:
    """The app's OpenAPI document; building an app opens nothing (the server's lifespan does),
    so its provider is never called."""
    provider = {"name": "primary", "protocol": "openai", "base_url": "http://127.0.0.1:9/v1"}
    route = {"name": "default", "model": {"provider": "primary", "model": "m1"}}
    config = parse_config({"providers": [provider], "routes": [route]}, environ={})
    document: dict[str, Any] = build_app(config).api.openapi()
    return document


DOCUMENT = _document()
schema = schemathesis.openapi.from_dict(DOCUMENT, config=CONFIG).exclude(path_regex=r"^/admin")


def _loopback_agents(
    context: schemathesis.HookContext, case: Case[Any], kwargs: dict[str, Any]
) -> None:
    """Every case of every phase, as sent: a generated agent host becomes loopback (schemathesis
    checks the case again after this hook, so its verdict is for what was sent)."""
    if case.operation.path == "/api/agents" and isinstance(case.body, dict):
        endpoint = case.body.get("endpoint")
        if isinstance(endpoint, str):
            case.body["endpoint"] = _HOST.sub(r"\g<1>127.0.0.1:9", endpoint, count=1)


@pytest.fixture(scope="module", autouse=True)
def _no_dns() -> Iterator[None]:
    # before_call hooks are process-wide in schemathesis: held only while this module runs.
    GLOBAL_HOOK_DISPATCHER.register_hook_with_name(_loopback_agents, "before_call")
    yield
    GLOBAL_HOOK_DISPATCHER.unregister(_loopback_agents)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    home: Path = tmp_path_factory.mktemp("fuzz")
    with FakeUpstream(name="primary") as upstream:
        config = make_config(
            {"primary": upstream},
            storage={"url": f"sqlite:///{home / 'nerve.db'}"},
            admin={"state_dir": str(home)},
        )
        running = RunningServer(build_app(config)).start()
        yield running
        running.stop()


def test_the_fuzzed_document_is_the_one_the_server_serves(server: RunningServer) -> None:
    served = httpx.get(f"{server.url}/openapi.json", timeout=10)
    assert served.status_code == 200 and served.json() == DOCUMENT


@schema.parametrize()
def test_every_operation_answers_as_its_document_says(
    case: Case[Any], server: RunningServer
) -> None:
    case.call_and_validate(base_url=server.url, timeout=10)
