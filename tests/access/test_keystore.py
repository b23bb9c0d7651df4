"""Managed keys in the store (SPEC KY-2), on SQLite and on PostgreSQL.

Each `KeyStore` here is a store object of its own on one `storage.url`, as each process (a
server, a replica, `nerve keys create`) opens one: what one stores, the others must read.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AsyncExitStack

import pytest

from nerve.access.keys import new_key
from nerve.access.keystore import KeyStore
from nerve.access.keystore_sql import keystore_from_url
from nerve.access.principal import Budget, digest
from nerve.errors import RequestError


@pytest.fixture
def stores(storage_url: str, closing: AsyncExitStack) -> Callable[[], KeyStore]:
    """stores() → another store on this test's (empty) database; all closed after."""

    def make() -> KeyStore:
        store = keystore_from_url(storage_url)
        closing.push_async_callback(store.close)
        return store

    return make


async def opened(stores: Callable[[], KeyStore]) -> KeyStore:
    store = stores()
    await store.open()
    await store.open()  # a no-op when open
    return store


async def test_a_key_is_added_listed_and_revoked_with_its_policy_intact(
    stores: Callable[[], KeyStore],
) -> None:
    store = await opened(stores)
    secret, made = new_key(
        {"name": "ci", "routes": "code,default", "models": ["openai/*"], "users": [],
         "rpm": 60, "tpm": 100_000, "max_parallel": 4, "budget": "20/month"},
        now=1000.0,
    )  # fmt: skip
    _, plain = new_key({"name": "laptop"}, now=1001.0)
    await store.add(made)
    await store.add(plain)

    assert await store.all() == [made, plain] == await store.active()
    (found, _) = await store.all()
    assert found.digest == digest(secret.encode()) and found.principal.hint == secret[-4:]
    assert found.principal.routes == ("code", "default") and found.principal.users == ()
    assert found.principal.budget == Budget(20.0, "month") and found.principal.managed
    assert found.principal.client == "key:ci" and found.created_at == 1000.0
    assert (await store.all())[1].principal.routes is None  # none given: any route

    assert await store.revoke("ci", at=2000.0) is True
    assert await store.active() == [plain]
    revoked, _ = await store.all()
    assert revoked.revoked_at == 2000.0 and revoked.principal == made.principal


async def test_a_name_is_never_reused_even_after_its_key_is_revoked(
    stores: Callable[[], KeyStore],
) -> None:
    store = await opened(stores)
    await store.add(new_key({"name": "ci"})[1])
    with pytest.raises(RequestError) as taken:
        await store.add(new_key({"name": "ci"})[1])
    assert taken.value.code == "key_exists" and "'ci' exists already" in taken.value.message
    assert await store.revoke("ci", at=1.0)
    with pytest.raises(RequestError, match="exists already"):
        await store.add(new_key({"name": "ci"})[1])
    assert len(await store.all()) == 1


async def test_revoking_an_unknown_or_revoked_key_says_false(
    stores: Callable[[], KeyStore],
) -> None:
    store = await opened(stores)
    await store.add(new_key({"name": "ci"})[1])
    assert await store.revoke("nobody", at=1.0) is False
    assert await store.revoke("ci", at=1.0) is True
    assert await store.revoke("ci", at=2.0) is False
    (kept,) = await store.all()
    assert kept.revoked_at == 1.0  # the first revocation's time stays


async def test_another_store_on_the_same_database_sees_keys_made_and_revoked(
    stores: Callable[[], KeyStore],
) -> None:
    """What `nerve keys create` stores, every server's keyring reads on its next refresh."""
    cli, server = await opened(stores), await opened(stores)
    _, made = new_key({"name": "bot", "budget": "5/day"})
    await cli.add(made)
    assert await server.active() == [made]
    assert await server.revoke("bot", at=made.created_at + 1)
    assert await cli.active() == []
    with pytest.raises(RequestError, match="exists already"):
        await cli.add(new_key({"name": "bot"})[1])


def test_a_url_of_another_kind_is_refused_without_echoing_it() -> None:
    with pytest.raises(ValueError) as refused:
        keystore_from_url("mysql://root:hunter2@db/nerve")
    assert "mysql" in str(refused.value) and "hunter2" not in str(refused.value)
