"""Admin sessions anchored in the store (SPEC AD-2, ST), on SQLite and on PostgreSQL.

Each `AdminAuth` here opens a store of its own on one `storage.url`, as each worker or replica
does: what one of them stores (secret, generated password, a logout) the others must see.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path

import pytest

from nerve.admin.auth import AdminAuth
from nerve.admin.store import AdminState, admin_store_from_url
from nerve.errors import AuthError
from nerve.gateway.resilience import ManualClock


@pytest.fixture
def auths(storage_url: str, closing: AsyncExitStack) -> Callable[..., AdminAuth]:
    """auths(environ=..., **options) → an unopened AdminAuth with its own store on the URL."""

    def make(environ: dict[str, str] | None = None, **options: object) -> AdminAuth:
        auth = AdminAuth(admin_store_from_url(storage_url), environ=environ or {}, **options)  # type: ignore[arg-type]
        closing.push_async_callback(auth.close)
        return auth

    return make


def announced_password(lines: list[str]) -> str:
    (line,) = [line for line in lines if "generated the admin password" in line]
    return line.split("password ")[1].split(" ")[0]


async def test_settle_keeps_the_first_secret_and_fills_a_password_only_once(
    storage_url: str,
) -> None:
    store = admin_store_from_url(storage_url)
    await store.open()
    try:
        assert await store.load() is None
        first = await store.settle(AdminState(b"\x01" * 32))
        assert first == AdminState(b"\x01" * 32) and await store.load() == first
        with_pw = await store.settle(AdminState(b"\x02" * 32, b"s" * 16, b"h" * 32))
        assert with_pw == AdminState(b"\x01" * 32, b"s" * 16, b"h" * 32)  # secret kept, pw filled
        again = await store.settle(AdminState(b"\x03" * 32, b"t" * 16, b"i" * 32))
        assert again == with_pw == await store.load()
    finally:
        await store.close()


async def test_a_generated_password_is_printed_once_and_stored_only_hashed(
    auths: Callable[..., AdminAuth],
) -> None:
    """AD-2: without $NERVE_ADMIN_PASSWORD one is generated on first start, shown once, and
    every later process on the store accepts it."""
    lines: list[str] = []
    first = auths(announce=lines.append)
    await first.open()
    password = announced_password(lines)
    stored = await first.store.load()
    assert stored is not None and stored.salt is not None
    assert stored.hash == hashlib.scrypt(password.encode(), salt=stored.salt, n=2**14, r=8, p=1,
                                         dklen=32, maxmem=64 * 1024 * 1024)  # fmt: skip
    assert password.encode() not in stored.secret + stored.salt + stored.hash
    again = auths(announce=lines.append)
    await again.open()
    assert len(lines) == 1  # not printed again
    assert again.check_password(password) and not again.check_password(password + "x")


async def test_replicas_starting_together_agree_on_one_secret_and_one_password(
    auths: Callable[..., AdminAuth],
) -> None:
    """ST: four processes starting at once on a store without admin state: one password is
    generated and announced, and a session issued by any of them is valid on all."""
    lines: list[str] = []
    replicas = [auths(announce=lines.append) for _ in range(4)]
    await asyncio.gather(*(r.open() for r in replicas))
    password = announced_password(lines)
    assert all(r.check_password(password) for r in replicas)
    for issuer in replicas:
        token = issuer.issue().token
        assert [(await r.verify(token)).token for r in replicas] == [token] * 4


async def test_a_session_from_one_replica_is_valid_on_another_and_logout_ends_it_on_all(
    auths: Callable[..., AdminAuth],
) -> None:
    """AD-2 + ST: token from A accepted by B; after logout on A, B refuses it (and only it)."""
    env = {"NERVE_ADMIN_PASSWORD": "pw-one"}
    a, b = auths(env), auths(env)
    await a.open()
    await b.open()
    session, other = a.issue(), a.issue()
    assert (await b.verify(session.token)).sid == session.sid
    await a.revoke(session)
    for replica in (a, b):
        with pytest.raises(AuthError) as refused:
            await replica.verify(session.token)
        assert refused.value.code == "login_required"
        assert (await replica.verify(other.token)).sid == other.sid


async def test_a_new_password_ends_every_session(auths: Callable[..., AdminAuth]) -> None:
    clock = ManualClock()
    one = auths({"NERVE_ADMIN_PASSWORD": "pw-one"}, clock=clock)
    await one.open()
    session = one.issue()
    changed = auths({"NERVE_ADMIN_PASSWORD": "pw-two"}, clock=clock)
    await changed.open()
    with pytest.raises(AuthError):
        await changed.verify(session.token)


async def test_revocations_are_forgotten_once_the_session_would_have_expired(
    auths: Callable[..., AdminAuth],
) -> None:
    clock = ManualClock()
    auth = auths({"NERVE_ADMIN_PASSWORD": "pw"}, clock=clock, session_hours=1)
    await auth.open()
    early = auth.issue()
    await auth.revoke(early)
    assert await auth.store.revoked(early.sid)
    clock.advance(3601)
    late = auth.issue()
    await auth.revoke(late)  # prunes what expired
    assert not await auth.store.revoked(early.sid) and await auth.store.revoked(late.sid)
    with pytest.raises(AuthError) as expired:
        await auth.verify(early.token)
    assert expired.value.code == "session_expired"


def legacy_file(path: Path, password: str) -> tuple[bytes, bytes, bytes]:
    """An admin.json as nerve wrote it before the state moved to the store."""
    secret, salt = secrets.token_bytes(32), secrets.token_bytes(16)
    hash_ = hashlib.scrypt(password.encode(), salt=salt, n=2**14, r=8, p=1, dklen=32,
                           maxmem=64 * 1024 * 1024)  # fmt: skip
    state = {"secret": secret.hex(), "password": {"salt": salt.hex(), "scrypt": hash_.hex()}}
    path.write_text(json.dumps(state))
    return secret, salt, hash_


async def test_an_older_admin_json_is_adopted_so_the_password_and_sessions_survive(
    auths: Callable[..., AdminAuth], tmp_path: Path
) -> None:
    """Upgrading: the store takes admin.json's secret and hash, so the old password still works
    and a token signed with the old state stays valid; the adoption is said once."""
    legacy = tmp_path / "admin.json"
    secret, salt, hash_ = legacy_file(legacy, "old-password")
    lines: list[str] = []
    upgraded = auths(legacy=legacy, announce=lines.append)
    await upgraded.open()
    assert await upgraded.store.load() == AdminState(secret, salt, hash_)
    assert upgraded.check_password("old-password")
    assert len(lines) == 1 and "adopted the admin state" in lines[0]
    token = upgraded.issue().token
    other = tmp_path / "other.json"
    legacy_file(other, "another-password")  # a replica's own, different file: the store wins
    replica = auths(legacy=other, announce=lines.append)
    await replica.open()
    assert replica.check_password("old-password") and not replica.check_password("another-password")
    assert (await replica.verify(token)).token == token
    assert len(lines) == 1
