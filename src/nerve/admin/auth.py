"""Admin authentication (SPEC AD-2, AD-3): one password, signed session tokens, HTTPS rule.

The state lives in the store (`storage.url`, `nerve.admin.store`): a random signing secret and,
when nerve generated the password, its scrypt hash, so every worker and replica on one database
shares them. `$NERVE_ADMIN_PASSWORD`, when set, is the password instead (hashed in memory, never
stored). A generated password is printed once, to stderr, by the process that stored it. An
`<state_dir>/admin.json` of an older nerve is adopted when the store has no state yet, so an
upgrade neither changes the password nor ends the sessions.

Sessions are `v1.<payload>.<hmac>` with the id and expiry inside, signed with a key derived from
the secret and the password hash: any process on the store checks them without a lookup, and a
new password ends every old session. Logout stores the session id in `admin_revoked`; `verify`
reads it (one indexed read: ~0.1 ms SQLite, ~0.25 ms PostgreSQL), so a logout on one replica is
refused on all of them at once. Nothing is cached: a cache could not prove itself fresh.

A session comes from the `nerve_admin` cookie or the `X-Nerve-Admin-Token` header (not
`Authorization`, which carries gateway API keys). Non-loopback clients must use HTTPS (426).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import json
import secrets
import sys
import time
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.requests import cookie_parser

from nerve.admin.store import AdminState, AdminStore
from nerve.config import is_loopback
from nerve.errors import AuthError, ConfigError, NerveError
from nerve.gateway.resilience import Clock

__all__ = ["COOKIE", "AdminAuth", "HttpsRequired", "Session", "check_transport"]

COOKIE = "nerve_admin"
HEADER = b"x-nerve-admin-token"
PASSWORD_ENV = "NERVE_ADMIN_PASSWORD"
_SCRYPT = {"n": 2**14, "r": 8, "p": 1}
_MAX_PASSWORD = 1024


class HttpsRequired(NerveError):
    status = 426
    type = "invalid_request_error"

    def __init__(self) -> None:
        super().__init__(
            "the admin panel needs HTTPS when reached from another machine: put nerve behind "
            "a TLS proxy (uvicorn trusts its X-Forwarded-Proto) or use 127.0.0.1",
            code="https_required",
        )

    def headers(self) -> dict[str, str]:
        return {"upgrade": "TLS/1.3, HTTP/1.1"}


def check_transport(scope: MutableMapping[str, Any]) -> None:
    """AD-3: plain HTTP is fine on loopback only. The scope is trusted (uvicorn rewrites
    client and scheme from X-Forwarded-* only for its trusted proxies)."""
    client = scope.get("client")
    if scope.get("scheme") in ("https", "wss") or client is None or is_loopback(client[0]):
        return
    raise HttpsRequired()


@dataclass(frozen=True)
class Session:
    token: str
    sid: str
    expires_at: float  # epoch seconds


def _scrypt(password: str, salt: bytes) -> bytes:
    return hashlib.scrypt(password.encode(), salt=salt, dklen=32, maxmem=64 * 1024 * 1024,
                          **_SCRYPT)  # fmt: skip


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class AdminAuth:
    def __init__(
        self,
        store: AdminStore,
        *,
        environ: Mapping[str, str],
        legacy: Path | None = None,
        clock: Clock = time.monotonic,
        session_hours: float = 24,
        announce: Callable[[str], None] | None = None,
    ) -> None:
        self.store = store
        self.legacy = legacy  # an older nerve's admin.json, adopted into an empty store
        self.environ = environ
        offset = time.time() - clock()  # wall time that a ManualClock can move
        self.now: Callable[[], float] = lambda: clock() + offset
        self.session_seconds = session_hours * 3600
        self.announce = announce or (lambda line: print(line, file=sys.stderr, flush=True))
        self._salt = b""
        self._hash = b""
        self._key = b""

    async def open(self) -> None:
        """Read the shared state, storing a secret (and a password) on the very first start."""
        await self.store.open()
        env_password = self.environ.get(PASSWORD_ENV, "")
        state = await self.store.load()
        if state is None or (not env_password and state.hash is None):
            state = await self._settle(env_password)
        if env_password:
            self._salt = hmac.digest(state.secret, b"env-password-salt", "sha256")[:16]
            self._hash = _scrypt(env_password, self._salt)
        else:
            assert state.salt is not None and state.hash is not None  # settled with a password
            self._salt, self._hash = state.salt, state.hash
        self._key = hmac.digest(state.secret, b"session:" + self._hash, "sha256")

    async def close(self) -> None:
        await self.store.close()

    async def _settle(self, env_password: str) -> AdminState:
        """Offer the store a state (admin.json's, else new); say what this process stored."""
        old = self._read_legacy()
        secret = bytes.fromhex(old["secret"]) if "secret" in old else secrets.token_bytes(32)
        password, salt, hash_ = None, None, None
        if "password" in old:
            salt, hash_ = (
                bytes.fromhex(old["password"]["salt"]),
                bytes.fromhex(old["password"]["scrypt"]),
            )
        elif not env_password:
            password, salt = secrets.token_urlsafe(12), secrets.token_bytes(16)
            hash_ = _scrypt(password, salt)
        stored = await self.store.settle(AdminState(secret, salt, hash_))
        if old and stored.secret == secret:
            self.announce(
                f"nerve admin: adopted the admin state of {self.legacy} into the store "
                "(storage.url); sessions and password are unchanged and the file is no longer read"
            )
        if password is not None and stored.hash == hash_:
            self.announce(
                f"WARNING nerve admin: ${PASSWORD_ENV} is not set; generated the admin password "
                f"{password} (shown once, stored hashed in the store at storage.url)"
            )
        return stored

    def _read_legacy(self) -> dict[str, Any]:
        if self.legacy is None:
            return {}
        try:
            state = json.loads(self.legacy.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as e:
            raise ConfigError(f"cannot read the admin state {self.legacy}: {e}") from None
        if not isinstance(state, dict):
            raise ConfigError(f"the admin state {self.legacy} is damaged; delete it to start over")
        return state

    def check_password(self, password: str) -> bool:
        """Slow on purpose (scrypt, ~50 ms): call it off the event loop."""
        if not self._hash or not password or len(password) > _MAX_PASSWORD:
            return False
        return hmac.compare_digest(_scrypt(password, self._salt), self._hash)

    def issue(self) -> Session:
        sid = secrets.token_hex(16)
        expires_at = int(self.now() + self.session_seconds)
        payload = _b64(json.dumps({"sid": sid, "exp": expires_at}).encode())
        signature = _b64(hmac.digest(self._key, f"v1.{payload}".encode(), "sha256"))
        return Session(f"v1.{payload}.{signature}", sid, expires_at)

    def _signed(self, token: str) -> Session:
        """The session a token carries if its signature and expiry hold (no store read)."""
        invalid = AuthError("admin login required: POST /admin/api/login", code="login_required")
        version, _, rest = token.partition(".")
        payload, _, signature = rest.partition(".")
        if version != "v1" or not self._key:
            raise invalid
        expected = hmac.digest(self._key, f"v1.{payload}".encode(), "sha256")
        try:
            if not hmac.compare_digest(_unb64(signature), expected):
                raise invalid
            claims = json.loads(_unb64(payload))
            sid, exp = str(claims["sid"]), float(claims["exp"])
        except (ValueError, KeyError, TypeError):
            raise invalid from None
        if exp <= self.now():
            raise AuthError("the admin session expired: log in again", code="session_expired")
        return Session(token, sid, exp)

    async def verify(self, token: str) -> Session:
        session = self._signed(token)
        if await self.store.revoked(session.sid):  # logged out, here or on another replica
            raise AuthError("admin login required: POST /admin/api/login", code="login_required")
        return session

    async def revoke(self, session: Session) -> None:
        await self.store.revoke(session.sid, session.expires_at, self.now())

    async def session(self, scope: MutableMapping[str, Any]) -> Session:
        """The caller's session (header, else cookie) after the transport check; else raise."""
        check_transport(scope)
        token = ""
        for name, value in scope.get("headers", ()):
            if name == HEADER:
                token = value.decode("latin-1").strip()
            elif name == b"cookie" and not token:
                with contextlib.suppress(UnicodeDecodeError):
                    token = cookie_parser(value.decode("latin-1")).get(COOKIE, "")
        if not token:
            raise AuthError("admin login required: POST /admin/api/login", code="login_required")
        return await self.verify(token)

    async def require(self, scope: MutableMapping[str, Any]) -> None:
        """The checker the gateway's /stats/reset awaits (`GatewayState.admin_check`)."""
        await self.session(scope)
