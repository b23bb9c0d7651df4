"""The web chat's WebSocket (issue 7, channels): Inbound/Outbound JSON over /chat/ws, typing
then the reply, reminders routed to the chat's sockets, what comes while the chat is closed
kept for its return, and who may connect."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import aiohttp
import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from nerve.assistant import Assistant, Bus, Outbound
from nerve.assistant.build import assistant_from_app
from nerve.channels.web import web_chat_routes
from nerve.server import build_app
from nerve.tools import ToolContext, ToolRegistry, tool
from tests.channels.conftest import ChatServer, kept, reply_of, reply_of_sync, until
from tests.conftest import make_config
from tests.fakes.upstream import FakeUpstream, Reply


async def receive(ws: aiohttp.ClientWebSocketResponse) -> dict[str, Any]:
    message = await ws.receive_json(timeout=10)
    assert isinstance(message, dict)
    return message


async def test_a_message_gets_typing_then_the_reply(
    chat_server: ChatServer, upstream: FakeUpstream
) -> None:
    upstream.script(Reply(text="Hello from nerve."))
    async with aiohttp.ClientSession() as http, http.ws_connect(
        f"{chat_server.url}/chat/ws?chat=tab1&user=asha"
    ) as ws:  # fmt: skip
        assert await receive(ws) == {"kind": "hello", "chat_id": "tab1"}
        await ws.send_json({"text": "hi there"})
        typing, reply = await receive(ws), await reply_of(lambda: receive(ws))
        assert typing["kind"] == "typing" and typing["chat_id"] == "tab1"
        assert reply["kind"] == "message" and reply["text"] == "Hello from nerve."
        assert reply["reply_to"] == typing["reply_to"] and reply["files"] == []
        await ws.send_str("not json")
        assert (await receive(ws))["kind"] == "error"
    [request] = upstream.requests
    assert request.body["messages"][-1] == {"role": "user", "content": "hi there"}


async def test_what_the_bus_delivers_to_a_chat_reaches_its_sockets(
    chat_server: ChatServer,
) -> None:
    async with aiohttp.ClientSession() as http, http.ws_connect(
        f"{chat_server.url}/chat/ws?chat=tab2"
    ) as ws:  # fmt: skip
        await receive(ws)
        reminder = Outbound("web", "tab2", "Reminder: stand up.")
        chat_server.server.call(chat_server.bus.deliver(reminder))
        got = await receive(ws)
        assert got["text"] == "Reminder: stand up." and got["kind"] == "message"


def test_the_page_is_served_without_outside_resources(chat_server: ChatServer) -> None:
    import httpx

    page = httpx.get(f"{chat_server.url}/chat", timeout=10)
    assert (
        page.status_code == 200 and "default-src 'self'" in page.headers["content-security-policy"]
    )
    assert "http" not in page.text.replace("http-equiv", "")
    script = httpx.get(f"{chat_server.url}/chat/chat.js", timeout=10)
    assert script.status_code == 200 and "/chat/ws" in script.text


def test_other_sites_and_remote_clients_are_refused_by_default() -> None:
    bus = Bus()
    client = TestClient(Starlette(routes=web_chat_routes(lambda: bus)))
    with pytest.raises(WebSocketDisconnect) as remote, client.websocket_connect("/chat/ws"):
        pass  # TestClient's peer is "testclient": not loopback
    assert remote.value.code == 1008
    opened = TestClient(Starlette(routes=web_chat_routes(lambda: bus, authorize=lambda ws: True)))
    with opened.websocket_connect("/chat/ws?chat=ok") as ws:
        assert ws.receive_json() == {"kind": "hello", "chat_id": "ok"}
    headers = {"origin": "http://evil.example", "host": "testserver"}
    with pytest.raises(WebSocketDisconnect), opened.websocket_connect("/chat/ws", headers=headers):
        pass
    with pytest.raises(WebSocketDisconnect), opened.websocket_connect("/chat/ws?chat=../x"):
        pass


def test_an_assistant_can_be_served_directly_without_a_bus(
    upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NERVE_ADMIN_PASSWORD", "channel-tests-password")
    app = build_app(make_config({"primary": upstream}, probes={"interval_seconds": 0}))
    held: dict[str, Assistant] = {}
    direct = web_chat_routes(lambda: held.get("it"), authorize=lambda ws: True)
    app.api.router.routes[:0] = direct  # ahead of the app's own /chat, which serves its bus
    upstream.script(Reply(text="Direct answer."))
    with TestClient(app, base_url="http://localhost") as client:
        held["it"] = assistant_from_app(app, tools=ToolRegistry())
        with client.websocket_connect("ws://localhost/chat/ws?chat=d1") as ws:
            ws.receive_json()
            ws.send_json({"text": "hello"})
            assert ws.receive_json()["kind"] == "typing"
            assert reply_of_sync(ws.receive_json)["text"] == "Direct answer."


def test_from_another_machine_the_chat_takes_an_api_key_over_https_only(
    upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    """AS-7 + GW security: off loopback, /chat/ws needs wss:// and one of server.api_keys."""
    monkeypatch.setenv("NERVE_ADMIN_PASSWORD", "channel-tests-password")
    config = make_config({"primary": upstream}, probes={"interval_seconds": 0},
                         server={"api_keys": ["k1"], "config_poll_seconds": 0})  # fmt: skip
    app = build_app(config)
    upstream.script(Reply(text="Hello from afar."))
    with TestClient(app, client=("10.0.0.5", 40000)) as client:
        for scheme, protocols in (
            ("ws", ["nerve", "nerve.key.k1"]),  # the key would travel in clear
            ("wss", ["nerve"]),  # no key
            ("wss", ["nerve", "nerve.key.wrong"]),
        ):
            with pytest.raises(WebSocketDisconnect) as refused, client.websocket_connect(
                f"{scheme}://testserver/chat/ws?chat=far", subprotocols=protocols
            ):  # fmt: skip
                pass
            assert refused.value.code == 1008
        with client.websocket_connect(
            "wss://testserver/chat/ws?chat=far&user=asha", subprotocols=["nerve", "nerve.key.k1"]
        ) as ws:
            assert ws.accepted_subprotocol == "nerve"
            assert ws.receive_json()["kind"] == "hello"
            ws.send_json({"text": "hi"})
            assert ws.receive_json()["kind"] == "typing"
            assert reply_of_sync(ws.receive_json)["text"] == "Hello from afar."


def test_a_page_that_rebinds_its_own_name_to_loopback_is_refused() -> None:
    """DNS rebinding: a loopback peer that reached us as evil.example is not a local user."""
    bus = Bus()
    client = TestClient(Starlette(routes=web_chat_routes(lambda: bus)), client=("127.0.0.1", 5000))
    for host in ("localhost:8080", "127.0.0.1:8080", "[::1]:8080"):
        with client.websocket_connect("/chat/ws?chat=ok", headers={"host": host}) as ws:
            assert ws.receive_json()["kind"] == "hello"
    rebound = {"host": "evil.example:8080", "origin": "http://evil.example:8080"}
    with pytest.raises(WebSocketDisconnect) as refused, client.websocket_connect(
        "/chat/ws?chat=ok", headers=rebound
    ):  # fmt: skip
        pass
    assert refused.value.code == 1008


async def test_a_message_for_a_closed_chat_is_kept_and_shown_once_when_it_connects(
    chat_server: ChatServer,
) -> None:
    """UX-2 "pending deliveries on open": what the bus brings while no tab of the chat is open
    (a mail summary here) waits in the store, then comes right after hello, marked, once."""
    summary = Outbound("web", "tab3", "2 new mails from Asha.")
    chat_server.server.call(chat_server.bus.deliver(summary))
    until(lambda: len(kept(chat_server, "tab3")) == 1, "the summary is kept")
    (entry,) = kept(chat_server, "tab3")
    async with aiohttp.ClientSession() as http:
        async with http.ws_connect(f"{chat_server.url}/chat/ws?chat=tab3") as ws:
            assert (await receive(ws))["kind"] == "hello"
            got = await receive(ws)
            assert got["text"] == "2 new mails from Asha." and got["kind"] == "message"
            assert got["queued_at"] == entry.created_at and got["id"] == f"kept-{entry.id}"
            chat_server.server.call(chat_server.bus.deliver(Outbound("web", "tab3", "live")))
            assert (await receive(ws))["text"] == "live"  # the next one, not a repeat
        assert kept(chat_server, "tab3") == []
        async with http.ws_connect(f"{chat_server.url}/chat/ws?chat=tab3") as ws:
            assert (await receive(ws))["kind"] == "hello"
            chat_server.server.call(chat_server.bus.deliver(Outbound("web", "tab3", "again")))
            assert (await receive(ws))["text"] == "again"  # nothing kept came twice


async def test_a_reply_that_finishes_after_the_tab_closed_is_kept_for_its_return(
    chat_server: ChatServer, upstream: FakeUpstream
) -> None:
    release = threading.Event()

    @tool(description="Looks the answer up (held until the test lets it finish).")
    async def look_up(ctx: ToolContext, what: str) -> str:
        await asyncio.to_thread(release.wait, 10)
        return f"{what}: 42"

    chat_server.tools.register(look_up)
    call = {"id": "c1", "function": {"name": "look_up", "arguments": {"what": "x"}}}
    upstream.script(Reply(tool_calls=[call]), Reply(text="The answer is 42."))
    web = chat_server.server.app.web_chat
    try:
        async with aiohttp.ClientSession() as http:
            async with http.ws_connect(f"{chat_server.url}/chat/ws?chat=tab4") as ws:
                await receive(ws)
                await ws.send_json({"text": "what is the answer?"})
                assert (await receive(ws))["kind"] == "typing"
            until(lambda: not web.reaches("tab4"), "the server saw the tab close")
            release.set()
            until(lambda: len(kept(chat_server, "tab4")) == 1, "the reply is kept")
            async with http.ws_connect(f"{chat_server.url}/chat/ws?chat=tab4") as ws:
                await receive(ws)
                got = await receive(ws)
                assert got["text"] == "The answer is 42." and "queued_at" in got
                assert got["reply_to"]  # still says which question it answers
    finally:
        release.set()
