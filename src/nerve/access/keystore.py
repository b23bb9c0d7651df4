"""Managed API keys (`nerve keys create|list|revoke`, the admin panel's Access page): the seam.

Keys are kept hashed (SHA-256) in the store (`storage.url`), beside memory, so every process
on it accepts the same keys and refuses the same revoked ones. The key itself is shown once, by
`create`, and never stored.

Implementations (keystore_sql.py, `keystore_from_url`): SQLite and PostgreSQL, in the
`access_keys` table of memory's migrations. Making a key and listing keys: keys.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from nerve.access.principal import Principal

__all__ = ["KeyStore", "ManagedKey"]


@dataclass(frozen=True, slots=True)
class ManagedKey:
    digest: bytes  # SHA-256 of the key
    principal: Principal  # name, hint (last 4 characters) and policy; managed=True
    created_at: float
    revoked_at: float | None = None

    def view(self) -> dict[str, Any]:
        """What may be shown (never the key): the principal's view, when made and revoked."""
        return {
            **self.principal.view(),
            "created_at": self.created_at,
            "revoked_at": self.revoked_at,
        }


class KeyStore(Protocol):
    async def open(self) -> None:
        """Connect and apply pending migrations; a no-op when already open."""

    async def close(self) -> None: ...

    async def active(self) -> list[ManagedKey]:
        """Every key not revoked (read every half second by each process: keep it one query)."""

    async def all(self) -> list[ManagedKey]:
        """Every key, revoked ones included, oldest first (read every half second by each
        process: keep it one query)."""

    async def add(self, key: ManagedKey) -> None:
        """Store a new key; RequestError (code "key_exists") if its name is taken, even by a
        revoked key (spend and logs are kept by name, so a name is never reused)."""

    async def revoke(self, name: str, at: float) -> bool:
        """Mark the key revoked; False when no active key has that name."""
