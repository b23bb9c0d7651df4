"""Admin authentication (SPEC AD-2, AD-3): one password, signed session tokens, HTTPS rule.

State lives in `<state_dir>/admin.json` (mode 0600): a random signing secret and, when nerve
generated the password, its scrypt hash. `$NERVE_ADMIN_PASSWORD`, when set, is the password
instead (hashed in memory, never stored). A generated password is printed once, to stderr.

Sessions are stateless: `v1.<payload>.<hmac>` with the expiry inside, signed with a key derived
from the secret and the password hash, so worker processes sharing the state directory accept
each other's sessions and a new password ends every old session. Logout revokes the token in
this process only (a copy held elsewhere lives until it expires: 24 h by default).

A session comes from the `nerve_admin` cookie or the `X-Nerve-Admin-Token` header (not
`Authorization`, which carries gateway API keys). Non-loopback clients must use HTTPS (426).
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import hmac
import json
import os
import secrets
import sys
import time
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.requests import cookie_parser

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
        state_dir: Path,
        *,
        environ: Mapping[str, str],
        clock: Clock = time.monotonic,
        session_hours: float = 24,
        announce: Callable[[str], None] | None = None,
    ) -> None:
        self.path = state_dir / "admin.json"
        self.environ = environ
        offset = time.time() - clock()  # wall time that a ManualClock can move
        self.now: Callable[[], float] = lambda: clock() + offset
        self.session_seconds = session_hours * 3600
        self.announce = announce or (lambda line: print(line, file=sys.stderr, flush=True))
        self._salt = b""
        self._hash = b""
        self._key = b""
        self._revoked: dict[str, float] = {}

    def open(self) -> None:
        """Read the state file, creating the secret (and a password) on first start."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock = os.open(self.path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)  # workers starting together create it once
            state = self._read()
            changed = "secret" not in state
            secret = bytes.fromhex(state.setdefault("secret", secrets.token_hex(32)))
            env_password = self.environ.get(PASSWORD_ENV, "")
            if env_password:
                self._salt = hmac.digest(secret, b"env-password-salt", "sha256")[:16]
                self._hash = _scrypt(env_password, self._salt)
            else:
                if "password" not in state:
                    password = secrets.token_urlsafe(12)
                    salt = secrets.token_bytes(16)
                    state["password"] = {
                        "salt": salt.hex(),
                        "scrypt": _scrypt(password, salt).hex(),
                    }
                    changed = True
                    self.announce(
                        f"WARNING nerve admin: ${PASSWORD_ENV} is not set; generated the admin "
                        f"password {password} (shown once, stored hashed in {self.path})"
                    )
                self._salt = bytes.fromhex(state["password"]["salt"])
                self._hash = bytes.fromhex(state["password"]["scrypt"])
            if changed:
                self._write(state)
        finally:
            os.close(lock)
        self._key = hmac.digest(secret, b"session:" + self._hash, "sha256")

    def _read(self) -> dict[str, Any]:
        try:
            state = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as e:
            raise ConfigError(f"cannot read the admin state {self.path}: {e}") from None
        if not isinstance(state, dict):
            raise ConfigError(f"the admin state {self.path} is damaged; delete it to start over")
        return state

    def _write(self, state: dict[str, Any]) -> None:
        tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(state, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)

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

    def verify(self, token: str) -> Session:
        expired = AuthError("the admin session expired: log in again", code="session_expired")
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
            raise expired
        if sid in self._revoked:
            raise invalid
        return Session(token, sid, exp)

    def revoke(self, session: Session) -> None:
        now = self.now()
        self._revoked = {s: e for s, e in self._revoked.items() if e > now}
        self._revoked[session.sid] = session.expires_at

    def session(self, scope: MutableMapping[str, Any]) -> Session:
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
        return self.verify(token)

    def require(self, scope: MutableMapping[str, Any]) -> None:
        """The checker the gateway's /stats/reset calls (`GatewayState.admin_check`)."""
        self.session(scope)
