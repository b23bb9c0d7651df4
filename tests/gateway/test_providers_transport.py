"""Transport failures become UpstreamErrors in one place, `TransportErrors` (providers/base.py).

Every upstream read and write (probe, one-shot POST, stream open, stream reads) goes through it:
an aiohttp failure or a timeout comes out as the same UpstreamError subclass, code and message
whichever path met it, with the original as `__cause__`; anything else passes through.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator

import aiohttp
import pytest

from nerve.config import ProviderConfig
from nerve.errors import UpstreamConnection, UpstreamError, UpstreamStatus, UpstreamTimeout
from nerve.gateway.providers.base import TransportErrors
from nerve.gateway.providers.openai import OpenAIProvider
from tests.fakes.upstream import FakeUpstream, Reply

BODY = {"messages": [{"role": "user", "content": "hello"}]}


@pytest.mark.parametrize(
    ("error", "kind", "code", "message"),
    [
        (aiohttp.ServerTimeoutError("read"), UpstreamTimeout, "upstream_timeout",
         "up: upstream timed out"),
        (TimeoutError(), UpstreamTimeout, "upstream_timeout", "up: upstream timed out"),
        (aiohttp.ClientConnectionError("refused"), UpstreamConnection, "upstream_unreachable",
         "up: refused"),
        (aiohttp.ServerDisconnectedError(), UpstreamConnection, "upstream_unreachable",
         "up: Server disconnected"),
        (aiohttp.ClientPayloadError("bad chunk"), UpstreamError, "upstream_error",
         "up: bad chunk"),
        (aiohttp.ClientConnectionError(), UpstreamConnection, "upstream_unreachable",
         "up: ClientConnectionError"),  # no message: the error's name, never "up: "
    ],
)  # fmt: skip
def test_each_transport_failure_maps_to_one_upstream_error(error, kind, code, message):
    with pytest.raises(UpstreamError) as caught, TransportErrors("up"):
        raise error
    assert type(caught.value) is kind
    assert caught.value.code == code and caught.value.message == message
    assert caught.value.__cause__ is error


@pytest.mark.parametrize(
    "error", [UpstreamStatus(503, "busy"), ValueError("not transport"), asyncio.CancelledError()]
)
def test_other_exceptions_pass_through_untouched(error):
    with pytest.raises(BaseException) as caught, TransportErrors("up"):
        raise error
    assert caught.value is error


def test_one_instance_is_reusable_and_quiet_on_success():
    errors = TransportErrors("up")
    for _ in range(2):
        with errors:
            pass
        with pytest.raises(UpstreamTimeout), errors:
            raise TimeoutError


def provider(base_url: str, timeout: float = 5.0) -> ProviderConfig:
    return ProviderConfig(name="up", base_url=base_url, api_key="k", timeout_seconds=timeout,
                          connect_timeout_seconds=timeout)  # fmt: skip


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as s:
        yield s


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # nothing listens once the socket is closed


async def test_every_path_reports_an_unreachable_upstream_alike(session):
    p = OpenAIProvider(provider(f"http://127.0.0.1:{closed_port()}/v1"), session)
    for call in (p.probe(), p.complete(BODY, "m"), p.open_stream(BODY, "m")):
        with pytest.raises(UpstreamConnection) as caught:
            await call
        assert caught.value.code == "upstream_unreachable"
        assert caught.value.message.startswith("up: ")
        assert isinstance(caught.value.__cause__, aiohttp.ClientConnectionError)


@pytest.mark.parametrize("stream", [False, True])
async def test_a_hanging_upstream_is_a_timeout_on_both_paths(session, stream):
    with FakeUpstream(name="slow") as fake:
        fake.script(Reply(hang=True))
        p = OpenAIProvider(provider(fake.openai_base_url, timeout=0.2), session)
        with pytest.raises(UpstreamTimeout) as caught:
            await (p.open_stream(BODY, "m") if stream else p.complete(BODY, "m"))
    assert caught.value.code == "upstream_timeout"
    assert caught.value.message == "up: upstream timed out"
