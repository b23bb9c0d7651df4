"""Secrets in the config file (SPEC GW-17): `enc:` values, Fernet under a master key.

The master key lives only in the environment (`NERVE_MASTER_KEY`); the file carries ciphertext.
It is either a Fernet key (`nerve keys generate` makes one) or a passphrase of at least 16
characters. `nerve keys encrypt` turns a value read from stdin into an `enc:` string. At load,
every `enc:` string is decrypted; a missing or wrong key stops start-up naming the key path, and
the error never contains the secret.

The two formats of an `enc:` value:

    enc:<fernet token>                  v0: the master key is the Fernet key itself
    enc:s1:<salt>:<fernet token>        s1: the Fernet key is scrypt(passphrase, salt,
                                            n=2**14, r=8, p=1, 32 bytes), url-safe base64

`<salt>` is 16 random bytes, url-safe base64 without padding, new for every encrypted value.
Encrypting under a Fernet key writes v0 (what older versions read); under a passphrase, s1. An s1
value decrypts under the passphrase it was made with, whatever that string looks like. One
derivation costs about 50 ms, so derived keys are cached per (passphrase, salt) for the process:
a reload re-reads the same values for free.
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from cryptography.fernet import Fernet, InvalidToken

from nerve.errors import ConfigError

__all__ = [
    "MASTER_KEY_ENV",
    "MIN_PASSPHRASE",
    "PREFIX",
    "decrypt_tree",
    "encrypt",
    "generate_key",
]

MASTER_KEY_ENV = "NERVE_MASTER_KEY"
PREFIX = "enc:"
MIN_PASSPHRASE = 16
_S1 = "s1:"
_SALT_BYTES = 16
_ACCEPTED = (
    f"a passphrase of at least {MIN_PASSPHRASE} characters or a Fernet key "
    "(`nerve keys generate` makes one)"
)


def generate_key() -> str:
    return Fernet.generate_key().decode()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_", validate=True)


@lru_cache(maxsize=256)
def _derived(passphrase: str, salt: bytes) -> Fernet:
    key = hashlib.scrypt(passphrase.encode(), salt=salt, n=2**14, r=8, p=1, dklen=32)
    return Fernet(base64.urlsafe_b64encode(key))


def _master(environ: Mapping[str, str], path: str) -> tuple[str, Fernet | None]:
    """The master key, and its Fernet when it is a Fernet key (None: a passphrase)."""
    key = environ.get(MASTER_KEY_ENV, "")
    if not key:
        raise ConfigError(f"the value is encrypted but ${MASTER_KEY_ENV} is not set", path=path)
    try:
        return key, Fernet(key.encode())
    except (ValueError, TypeError):
        pass
    if len(key) < MIN_PASSPHRASE:
        raise ConfigError(
            f"${MASTER_KEY_ENV} is too short for a passphrase and not a Fernet key: "
            f"set {_ACCEPTED}",
            path=path,
        )
    return key, None


def encrypt(value: str, environ: Mapping[str, str]) -> str:
    if not environ.get(MASTER_KEY_ENV):
        raise ConfigError(f"${MASTER_KEY_ENV} is not set: set {_ACCEPTED}", path="<stdin>")
    key, fernet = _master(environ, "<stdin>")
    if fernet is not None:
        return PREFIX + fernet.encrypt(value.encode()).decode()
    salt = os.urandom(_SALT_BYTES)
    token = _derived(key, salt).encrypt(value.encode()).decode()
    return f"{PREFIX}{_S1}{_b64(salt)}:{token}"


def _decrypt(value: str, environ: Mapping[str, str], path: str) -> str:
    key, fernet = _master(environ, path)
    body = value[len(PREFIX) :]
    damaged = f"cannot decrypt: wrong ${MASTER_KEY_ENV}, or the value is damaged"
    if body.startswith(_S1):
        salt_text, _, token = body[len(_S1) :].partition(":")
        try:
            salt = _unb64(salt_text)
        except ValueError:  # binascii.Error included
            raise ConfigError(damaged, path=path) from None
        fernet = _derived(key, salt)
    elif fernet is None:
        raise ConfigError(
            f"cannot decrypt: the value was made with a Fernet master key, but ${MASTER_KEY_ENV} "
            "is a passphrase (wrong key): set the Fernet key it was encrypted with",
            path=path,
        )
    else:
        token = body
    try:
        return fernet.decrypt(token.encode()).decode()
    except InvalidToken:
        raise ConfigError(damaged, path=path) from None


def decrypt_tree(value: Any, environ: Mapping[str, str], path: str = "") -> Any:
    """Decrypt every `enc:` string of a parsed config tree."""
    if isinstance(value, str) and value.startswith(PREFIX):
        return _decrypt(value, environ, path)
    if isinstance(value, list):
        return [decrypt_tree(v, environ, f"{path}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {k: decrypt_tree(v, environ, f"{path}.{k}" if path else str(k))
                for k, v in value.items()}  # fmt: skip
    return value
