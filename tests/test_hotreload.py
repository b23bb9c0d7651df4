"""Hot reload of routes and providers (SPEC GW-18), through a real server and its config file."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from nerve.config import parse_config_text
from nerve.errors import ConfigError
from nerve.hotreload import ConfigWatcher, restart_required
from nerve.server import build_app
from tests.conftest import RunningServer
from tests.fakes.upstream import FakeUpstream, Reply


def config_text(
    fakes: dict[str, FakeUpstream],
    default: str,
    model: str = "m1",
    fallbacks: list[dict[str, str]] | None = None,
    **extra: Any,
) -> str:
    providers = [
        {"name": n, "protocol": "openai", "base_url": f.openai_base_url, "api_key": f"sk-{n}"}
        for n, f in fakes.items()
    ]
    route = {"name": "default", "model": {"provider": default, "model": model}}
    routes = [{**route, "fallbacks": fallbacks or []}]
    return yaml.safe_dump({"providers": providers, "routes": routes, "probes":
                           {"interval_seconds": 0}, **extra})  # fmt: skip


Served = tuple[RunningServer, Path]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Callable[..., Served]]:
    servers: list[RunningServer] = []

    def start(text: str, poll: float = 0) -> Served:
        path = tmp_path / "nerve.yaml"
        text = text.replace("probes:", f"server:\n  config_poll_seconds: {poll}\nprobes:")
        path.write_text(text)
        app = build_app(parse_config_text(text), config_path=path)
        server = RunningServer(app).start()
        servers.append(server)
        return server, path

    yield start
    for server in servers:
        server.stop()


def chat(url: str, **body: Any) -> httpx.Response:
    payload = {"model": "auto", "messages": [{"role": "user", "content": "hi"}], **body}
    return httpx.post(f"{url}/v1/chat/completions", json=payload, timeout=10)


def reload(server: RunningServer, text: str | None = None) -> dict[str, Any]:
    """Run the reload on the server's own event loop, as the admin endpoint does."""
    result: dict[str, Any] = server.call(server.app.reload(text))
    return result


def test_a_reload_with_new_text_routes_new_requests_and_persists_the_file(
    served, upstream, upstream2
):
    fakes = {"one": upstream, "two": upstream2}
    server, path = served(config_text(fakes, "one"))
    assert chat(server.url).headers["x-nerve-provider"] == "one"

    new = config_text(fakes, "two", model="m2")
    result = reload(server, new)

    assert result["reloaded"] and result["persisted"]
    assert "routes" in result["changed"] and result["restart_required"] == []
    answer = chat(server.url)
    assert answer.headers["x-nerve-provider"] == "two"
    assert answer.headers["x-nerve-model"] == "m2"
    assert path.read_text() == new
    assert "two/m2" in httpx.get(f"{server.url}/v1/models").text


def test_an_invalid_config_is_rejected_with_its_reason_and_the_old_one_keeps_serving(
    served, upstream, upstream2
):
    fakes = {"one": upstream, "two": upstream2}
    server, path = served(config_text(fakes, "one"))
    before = path.read_text()
    bad = config_text(fakes, "three")  # no provider named three

    with pytest.raises(ConfigError, match=r"routes\[0\]\.model\.provider: unknown provider"):
        reload(server, bad)
    with pytest.raises(ConfigError, match="not valid YAML"):
        reload(server, "routes: [unclosed")

    assert path.read_text() == before
    assert chat(server.url).headers["x-nerve-provider"] == "one"


def test_requests_in_flight_finish_on_the_config_they_started_with(served, upstream, upstream2):
    fakes = {"one": upstream, "two": upstream2}
    upstream.script(Reply(chunks=["old ", "config"], gate_after=1))
    server, _ = served(config_text(fakes, "one"))
    payload = {"model": "auto", "stream": True, "messages": [{"role": "user", "content": "hi"}]}

    with httpx.stream(
        "POST", f"{server.url}/v1/chat/completions", json=payload, timeout=10
    ) as stream:
        lines = stream.iter_lines()
        first = next(line for line in lines if '"content":"old' in line)  # then held
        reload(server, config_text(fakes, "two"))
        assert chat(server.url).headers["x-nerve-provider"] == "two"  # new requests: new config
        upstream.release()
        rest = "\n".join(lines)

    assert "old " in first and "config" in rest and rest.rstrip().endswith("[DONE]")
    assert stream.headers["x-nerve-provider"] == "one"


def test_an_open_breaker_survives_a_reload_that_keeps_its_candidate(served, upstream, upstream2):
    fakes = {"one": upstream, "two": upstream2}
    limits = {"breaker": {"failures": 2, "half_open_after_seconds": 600}}
    server, _ = served(config_text(fakes, "one", limits=limits))
    upstream.script(Reply(status=500), Reply(status=500))
    assert chat(server.url).status_code == 502 and chat(server.url).status_code == 502
    assert chat(server.url).json()["error"]["code"] == "all_failed"  # open: not called

    # The route gains a fallback; the primary it keeps is still resting.
    fallback = {"provider": "two", "model": "f"}
    reload(server, config_text(fakes, "one", fallbacks=[fallback], limits=limits))

    answer = chat(server.url)
    assert answer.status_code == 200 and answer.headers["x-nerve-provider"] == "two"
    assert len(upstream.requests) == 2
    assert httpx.get(f"{server.url}/stats").json()["breakers"]["one/m1"]["state"] == "open"


def test_a_changed_file_is_applied_by_the_watcher_and_a_bad_edit_is_reported(
    served, upstream, upstream2
):
    fakes = {"one": upstream, "two": upstream2}
    server, path = served(config_text(fakes, "one"), poll=3600)  # its own loop stays idle
    watcher = server.app.watcher
    assert watcher is not None

    def poll() -> bool:
        return bool(server.call(watcher.check()))  # one poll, as the watcher's loop does

    path.write_text(config_text(fakes, "two"))
    assert not poll() and poll()  # applied once two polls read the same
    assert chat(server.url).headers["x-nerve-provider"] == "two"

    path.write_text("routes: [unclosed")
    assert not poll() and not poll()
    assert watcher.last_error is not None and "not valid YAML" in watcher.last_error
    assert chat(server.url).headers["x-nerve-provider"] == "two"
    assert httpx.get(f"{server.url}/health").json()["config"]["last_error"] == watcher.last_error


def test_the_watchers_own_loop_applies_a_changed_file(served, upstream, upstream2):
    fakes = {"one": upstream, "two": upstream2}
    server, path = served(config_text(fakes, "one"), poll=0.01)

    watcher = server.app.watcher
    assert watcher is not None

    path.write_text(config_text(fakes, "two"))  # in place, as an editor does

    assert wait_for(lambda: chat(server.url).headers.get("x-nerve-provider") == "two"
                    and watcher.last_error is None)  # fmt: skip


def wait_for(condition: Callable[[], bool], timeout: float = 10) -> bool:
    """Poll a condition until it holds or `timeout` passes: the watcher keeps its own schedule."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)  # a polling pause, not a timing assumption
    return True


def test_an_empty_config_file_is_reported_not_taken_for_the_defaults(served, upstream):
    server, path = served(config_text({"one": upstream}, "one"), poll=3600)
    watcher = server.app.watcher
    assert watcher is not None

    path.write_text("# nothing here yet\n\n")
    assert not server.call(watcher.check()) and not server.call(watcher.check())

    assert watcher.last_error == "the config file is empty"
    assert server.app.reloaded_at is None
    assert chat(server.url).headers["x-nerve-provider"] == "one"


def test_sections_that_own_resources_are_reported_as_needing_a_restart(upstream):
    old = parse_config_text(config_text({"one": upstream}, "one"))
    new = parse_config_text(
        config_text(
            {"one": upstream}, "one", server={"port": 9999}, storage={"url": "sqlite:///other.db"}
        )
    )
    assert restart_required(old, new) == ["server.port", "storage"]


async def test_the_watcher_applies_only_a_real_change_and_keeps_the_last_good_config(tmp_path):
    path = tmp_path / "nerve.yaml"
    path.write_text("a: 1\n")
    applied: list[str] = []

    async def apply(text: str) -> None:
        if "bad" in text:
            raise ConfigError("bad value", path="a")
        applied.append(text)

    watcher = ConfigWatcher(path, apply, interval=60)
    watcher.seen("a: 1\n")
    assert not await watcher.check()  # the file as loaded is not a change
    path.write_text("a: 2\n")
    assert not await watcher.check()  # read once: it may still be being written
    assert await watcher.check() and applied == ["a: 2\n"]
    assert not await watcher.check()
    path.write_text("a: bad\n")
    assert not await watcher.check() and not await watcher.check()
    assert watcher.last_error is not None and "a: bad value" in watcher.last_error
    path.unlink()
    assert not await watcher.check()
    assert "cannot read" in (watcher.last_error or "")
    assert applied == ["a: 2\n"]


async def test_a_file_caught_mid_write_is_applied_only_once_complete_and_unchanged(tmp_path):
    """An in-place rewrite (truncate, then write, in pieces) polled at every step."""
    path = tmp_path / "nerve.yaml"
    old, new = "a: 1\n", "a: 2\nb: [1, 2]\n"
    path.write_text(old)
    applied: list[str] = []

    async def apply(text: str) -> None:
        applied.append(text)

    watcher = ConfigWatcher(path, apply, interval=60)
    watcher.prime()

    with path.open("w") as f:  # truncated
        assert not await watcher.check()
        f.write(new[:5])
        f.flush()
        assert not await watcher.check()  # half a file
        f.write(new[5:])
        f.flush()
        assert not await watcher.check()  # whole, but read once
    assert await watcher.check()

    assert applied == [new] and watcher.last_error is None
    assert not await watcher.check()


async def test_a_rewrite_that_ends_as_it_began_is_no_change(tmp_path):
    path = tmp_path / "nerve.yaml"
    path.write_text("a: 1\n")
    applied: list[str] = []

    async def apply(text: str) -> None:
        applied.append(text)

    watcher = ConfigWatcher(path, apply, interval=60)
    watcher.prime()
    path.write_text("")  # truncated...
    assert not await watcher.check()
    path.write_text("a: 1\n")  # ...and the same content written back
    assert not await watcher.check() and not await watcher.check()
    assert applied == [] and watcher.last_error is None


def test_what_the_learning_router_learnt_survives_a_reload(served, upstream, upstream2):
    fakes = {"one": upstream, "two": upstream2}
    server, _ = served(config_text(fakes, "one"))
    for _ in range(3):
        assert chat(server.url).status_code == 200

    fallback = {"provider": "two", "model": "f"}
    reload(server, config_text(fakes, "one", fallbacks=[fallback], learning={"enabled": True}))

    evolution = httpx.get(f"{server.url}/evolution").json()
    route = evolution["routes"]["default"]
    assert route["configured"] == ["one/m1", "two/f"]
    assert route["candidates"]["one/m1"]["calls"] == 3
    assert evolution["config"]["enabled"] is True
    assert chat(server.url).status_code == 200
    after = httpx.get(f"{server.url}/evolution").json()["routes"]["default"]["candidates"]
    assert sum(c["calls"] for c in after.values()) == 4  # the learner kept counting


def test_the_file_the_server_started_with_is_not_applied_again(served, upstream, caplog):
    server, _ = served(config_text({"one": upstream}, "one"), 0.01)
    watcher = server.app.watcher
    assert watcher is not None
    server.call(watcher.check())  # what the watcher's next tick does
    assert server.app.reloaded_at is None
    assert "RELOAD" not in caplog.text
