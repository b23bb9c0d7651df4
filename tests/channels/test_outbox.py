"""The outbox on SQLite and PostgreSQL (SPEC AS-7, UX-2, ST): messages for a closed chat are
kept, taken by one claimer each, oldest first, and removed only once shown."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from nerve.channels.outbox import Outbox, outbox_from_url
from tests.memory.conftest import backend, postgres_schema, storage_url  # noqa: F401 - fixtures

T = 1_780_000_000.0


@pytest.fixture
async def boxes(storage_url: str) -> AsyncIterator[tuple[Outbox, Outbox]]:  # noqa: F811
    """Two outboxes on one database: two replicas' connections."""
    a, b = outbox_from_url(storage_url), outbox_from_url(storage_url)
    await a.open()
    await b.open()
    yield a, b
    await a.close()
    await b.close()


async def test_kept_messages_are_claimed_oldest_first_and_gone_once_done(
    boxes: tuple[Outbox, Outbox],
) -> None:
    a, b = boxes
    for i in (2, 0, 1):
        await a.put("web", "tab1", {"kind": "message", "text": f"m{i}"}, T + i)
    await a.put("web", "tab2", {"kind": "message", "text": "other chat"}, T)
    await a.put("discord", "tab1", {"text": "other channel"}, T)
    taken = await b.claim("web", ["tab1"], "b", T + 10, T + 310)
    assert [k.body["text"] for k in taken] == ["m0", "m1", "m2"]
    assert [k.created_at for k in taken] == [T, T + 1, T + 2]
    assert await a.claim("web", ["tab1"], "a", T + 10, T + 310) == []  # claimed by b
    for kept in taken:
        await a.done(kept.id, "a")  # not a's: nothing removed
    assert len(await a.of_chat("web", "tab1")) == 3
    for kept in taken:
        await b.done(kept.id, "b")
    assert await a.of_chat("web", "tab1") == []
    assert [k.body["text"] for k in await a.of_chat("web", "tab2")] == ["other chat"]


async def test_a_released_or_abandoned_claim_can_be_taken_again(
    boxes: tuple[Outbox, Outbox],
) -> None:
    a, b = boxes
    first = await a.put("web", "tab1", {"text": "released"}, T)
    await a.put("web", "tab1", {"text": "abandoned"}, T + 1)
    taken = await a.claim("web", ["tab1"], "a", T, T + 300)
    await b.release(first, "b")  # not b's claim
    assert await b.claim("web", ["tab1"], "b", T + 1, T + 301) == []
    await a.release(first, "a")  # the socket closed before it was sent
    again = await b.claim("web", ["tab1"], "b", T + 2, T + 302)
    assert [k.body["text"] for k in again] == ["released"]
    late = await b.claim("web", ["tab1"], "b", T + 300, T + 600)  # a died holding the other
    assert [k.body["text"] for k in late] == ["abandoned"] and len(taken) == 2


async def test_two_tabs_racing_on_two_replicas_share_the_messages_without_overlap(
    boxes: tuple[Outbox, Outbox],
) -> None:
    a, b = boxes
    for i in range(40):
        await a.put("web", "tab1", {"text": f"m{i}"}, T + i)
    claims = [
        box.claim("web", ["tab1", "tab9"], owner, T + 50, T + 350, limit=7)
        for box, owner in [(a, "a"), (b, "b")] * 4
    ]
    taken = [k.body["text"] for batch in await asyncio.gather(*claims) for k in batch]
    assert len(taken) == len(set(taken)) == 40  # every message once, none twice


async def test_many_chats_are_claimed_in_one_call(boxes: tuple[Outbox, Outbox]) -> None:
    a, _ = boxes
    chats = [f"tab{i}" for i in range(500)]
    for chat in chats[::50]:
        await a.put("web", chat, {"text": chat}, T)
    taken = await a.claim("web", chats, "a", T, T + 300, limit=100)
    assert sorted(k.chat_id for k in taken) == sorted(chats[::50])
