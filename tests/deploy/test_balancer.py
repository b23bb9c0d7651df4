"""The soak's balancer (tests/fakes/balancer.py) does what its checks rely on: round-robin over
the backends in rotation, a backend out while its /ready fails or it refuses connections (the
client's connection then goes to another, unharmed), back in a new turn once /ready is 200,
and every forward on record with its backend, turn and answer's status."""

from __future__ import annotations

import asyncio
from collections import Counter

import httpx
from aiohttp import web

from tests.fakes.balancer import Balancer
from tests.fakes.loopback import Loopback


class Backend(Loopback):
    """A replica in miniature: `/ready` answers `ready_status`, `/who` its name."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name
        self.ready_status = 200

    def routes(self, app: web.Application) -> None:
        async def ready(request: web.Request) -> web.Response:
            return web.json_response({}, status=self.ready_status)

        async def who(request: web.Request) -> web.Response:
            return web.Response(text=self.name)

        app.router.add_get("/ready", ready)
        app.router.add_get("/who", who)

    @property
    def address(self) -> tuple[str, int]:
        return ("127.0.0.1", int(self.url.rsplit(":", 1)[1]))


async def whos(url: str, n: int) -> Counter[str]:
    # No keep-alive: every request a connection of its own, as the soak's clients.
    async with httpx.AsyncClient(limits=httpx.Limits(max_keepalive_connections=0)) as client:
        return Counter([(await client.get(f"{url}/who")).text for _ in range(n)])


async def test_rotation_follows_ready_and_refusals() -> None:
    with Backend("a") as a, Backend("b") as b:
        balancer = await Balancer([a.address, b.address], interval=0.01).start()
        try:
            async with asyncio.timeout(10):
                await balancer.wait_for(lambda: all(balancer.up.values()))
                assert await whos(balancer.url, 10) == {"a": 5, "b": 5}

                a.ready_status = 503  # /ready fails: out, at the next check
                await balancer.wait_for(lambda: not balancer.up[a.address])
                assert await whos(balancer.url, 6) == {"b": 6}
                (out,) = [t for t in balancer.transitions if not t.up]
                assert out.backend == a.address and out.why.startswith("HTTP/1.1 503")

                a.ready_status = 200  # back, in its second turn
                await balancer.wait_for(lambda: balancer.up[a.address])
                assert balancer.turn(a.address) == 2 and balancer.turn(b.address) == 1

                b.stop()  # refuses: the connection goes to `a`, the client sees nothing
                assert await whos(balancer.url, 4) == {"a": 4}
                assert not balancer.up[b.address]
                # Out by a refused forward, or by a check that met it stopping (a busy machine).
                assert any(t.backend == b.address and not t.up for t in balancer.transitions)
        finally:
            await balancer.stop()
    assert all(f.status == 200 and not f.cut for f in balancer.forwards)
    assert Counter(f.turn for f in balancer.forwards if f.backend == a.address) == {1: 5, 2: 4}
    assert balancer.refused == 0
