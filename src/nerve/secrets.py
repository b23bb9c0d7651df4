"""Secrets in the config file (SPEC GW-17): `enc:<token>` values, Fernet under a master key.

The master key lives only in the environment (`NERVE_MASTER_KEY`); the file carries ciphertext.
`nerve keys generate` makes a key, `nerve keys encrypt` turns a value read from stdin into an
`enc:` string. At load, every `enc:` string is decrypted; a missing or wrong key stops start-up
naming the key path, and the error never contains the secret.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cryptography.fernet import Fernet, InvalidToken

from nerve.errors import ConfigError

__all__ = ["MASTER_KEY_ENV", "PREFIX", "decrypt_tree", "encrypt", "generate_key"]

MASTER_KEY_ENV = "NERVE_MASTER_KEY"
PREFIX = "enc:"


def generate_key() -> str:
    return Fernet.generate_key().decode()


def _fernet(environ: Mapping[str, str], path: str) -> Fernet:
    key = environ.get(MASTER_KEY_ENV, "")
    if not key:
        raise ConfigError(f"the value is encrypted but ${MASTER_KEY_ENV} is not set", path=path)
    try:
        return Fernet(key.encode())
    except (ValueError, TypeError):
        raise ConfigError(
            f"${MASTER_KEY_ENV} is not a Fernet key (32 url-safe base64 bytes; "
            "`nerve keys generate` makes one)",
            path=path,
        ) from None


def encrypt(value: str, environ: Mapping[str, str]) -> str:
    return PREFIX + _fernet(environ, "<stdin>").encrypt(value.encode()).decode()


def decrypt_tree(value: Any, environ: Mapping[str, str], path: str = "") -> Any:
    """Decrypt every `enc:` string of a parsed config tree."""
    if isinstance(value, str) and value.startswith(PREFIX):
        try:
            return _fernet(environ, path).decrypt(value[len(PREFIX) :].encode()).decode()
        except InvalidToken:
            raise ConfigError(
                f"cannot decrypt: wrong ${MASTER_KEY_ENV}, or the value is damaged", path=path
            ) from None
    if isinstance(value, list):
        return [decrypt_tree(v, environ, f"{path}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {k: decrypt_tree(v, environ, f"{path}.{k}" if path else str(k))
                for k, v in value.items()}  # fmt: skip
    return value
