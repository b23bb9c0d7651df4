"""Every key this server accepts: those of the config file and those made by `nerve keys create`.

Lookup is by the key's SHA-256 in a dict, so an unknown key and a known one cost the same and
nothing here holds a key in the clear. Managed keys live in the store (`storage.url`, see
keystore.py); every process re-reads them every `refresh_seconds` (0.5 s), so a key made or
revoked anywhere is honoured or refused by every replica within a second. Once a managed key
was made the server requires keys, even after the last one is revoked. If the store cannot
be read for `stale_seconds`, managed keys are refused (a revoked key must not live on because
the store is down); the config's keys keep working.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from nerve.access.principal import Budget, Principal, digest

if TYPE_CHECKING:
    from nerve.access.keystore import KeyStore
    from nerve.config import KeyConfig

__all__ = ["Keyring", "principal_from_config"]

log = logging.getLogger("nerve.access")


def principal_from_config(entry: KeyConfig, *, managed: bool = False) -> Principal:
    budget = entry.budget
    return Principal(
        name=entry.name,
        client=f"key:{entry.name}",
        hint=entry.key[-4:],
        routes=entry.routes,
        models=entry.models,
        users=entry.users,
        rpm=entry.rpm,
        tpm=entry.tpm,
        max_parallel=entry.max_parallel,
        budget=Budget(budget.usd, budget.period) if budget else None,
        managed=managed,
    )


class Keyring:
    def __init__(
        self,
        keys: Sequence[KeyConfig],
        store: KeyStore | None = None,
        *,
        refresh_seconds: float = 0.5,
        stale_seconds: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._config = {digest(k.key.encode()): principal_from_config(k) for k in keys}
        self._managed: dict[bytes, Principal] = {}
        self._ever_managed = False  # a managed key was made, even if revoked since
        self.store = store
        self.refresh_seconds = refresh_seconds
        self.stale_seconds = stale_seconds
        self._clock = clock
        self._loaded_at = -float("inf")
        self._task: asyncio.Task[None] | None = None
        self._failing = False

    def reconfigure(self, keys: Sequence[KeyConfig]) -> None:
        """The config file's keys after a reload; managed keys are untouched."""
        self._config = {digest(k.key.encode()): principal_from_config(k) for k in keys}

    @property
    def active(self) -> bool:
        """Whether any key exists: then every non-public request must carry one. A managed key
        revoked still counts: revoking the last key must not open the server to everyone."""
        return bool(self._config) or self._ever_managed

    def resolve(self, token: bytes) -> Principal | None:
        """The principal `token` names, or None (unknown, revoked, or empty)."""
        if not token:
            return None
        key = digest(token)
        found = self._config.get(key)
        if found is not None:
            return found
        if self._managed and self._clock() - self._loaded_at > self.stale_seconds:
            return None  # the store has not answered lately: a revocation may be missed
        return self._managed.get(key)

    def principals(self) -> list[Principal]:
        """Every known key's principal, config first (for /stats and the admin panel)."""
        return [*self._config.values(), *self._managed.values()]

    async def refresh(self) -> None:
        """Re-read the managed keys now (the poller calls this; so do tests and the CLI)."""
        if self.store is None:
            return
        rows = await self.store.all()
        self._managed = {r.digest: r.principal for r in rows if r.revoked_at is None}
        self._ever_managed = bool(rows)
        self._loaded_at = self._clock()

    async def open(self) -> None:
        if self.store is None:
            return
        await self.store.open()
        await self.refresh()
        self._task = asyncio.create_task(self._poll(), name="keyring refresh")

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self.store is not None:
            await self.store.close()

    async def _poll(self) -> None:
        while True:
            await asyncio.sleep(self.refresh_seconds)
            try:
                await self.refresh()
            except Exception as e:  # the store is down: keep polling, refuse when stale
                if not self._failing:
                    log.error("cannot read the managed API keys from the store: %s", e)
                self._failing = True
                continue
            if self._failing:
                log.warning("the managed API keys are readable again")
                self._failing = False
