"""The admin panel's state: auth, login throttle, the event log, and what it is attached to.

`mount_admin(app)` (in `routes`) is the server's one call: it builds the panel, adds its
routes to the app and gives the gateway the session check for /stats/reset. `open()` (in the
lifespan, after the gateway opened) reads the admin state from the store, opens the managed API
keys (`keys`, the Access page), starts the event log, subscribes it to the gateway's call
outcomes and mirrors the `nerve` loggers into it; `close()` undoes that.

Both live where `storage.url` points, so every worker and replica on it shares them: sessions in
the store (`nerve.admin.store`), events in PostgreSQL's `event_log` table or, with SQLite, in
the JSONL file beside the database (`admin.event_log` names another file, or "" for none).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from nerve.access.keystore_sql import keystore_from_url
from nerve.admin.auth import AdminAuth
from nerve.admin.masking import redactor
from nerve.admin.store import admin_store_from_url
from nerve.admin.throttle import LoginThrottle
from nerve.admin.throttle_shared import SharedLoginThrottle
from nerve.config import Config
from nerve.config_sections import AdminConfig
from nerve.errors import ConfigError
from nerve.events import EventLog, EventSink, EventTable, JsonlFile, LogMirror
from nerve.gateway.resilience import Clock
from nerve.store.url import SQLiteURL, parse_store_url

if TYPE_CHECKING:
    from nerve.gateway.app import GatewayState

__all__ = ["AdminPanel", "Host"]

# The gateway's per-call log lines: they reach the event log as structured outcomes already.
_OUTCOME_LINES = ("FALLBACK route=", "ERROR route=")


class Host(Protocol):
    """What the panel needs of the server (`nerve.server.NerveApp`)."""

    config: Config
    config_path: Path | None
    gateway: GatewayState

    async def reload(self, text: str | None = None) -> dict[str, Any]: ...


class AdminPanel:
    def __init__(
        self, host: Host, *, clock: Clock = time.monotonic, environ: Mapping[str, str] | None = None
    ) -> None:
        self.host = host
        self.environ = os.environ if environ is None else environ
        settings = host.config.admin
        self.enabled = settings.enabled
        url = host.config.storage.url
        try:
            store = admin_store_from_url(url)
            self.keys = keystore_from_url(url)  # the managed API keys (the Access page)
        except ValueError as e:
            raise ConfigError(str(e), path="storage.url") from None
        self.auth = AdminAuth(
            store,
            environ=self.environ,
            legacy=Path(settings.state_dir) / "admin.json",
            clock=clock,
            session_hours=settings.session_hours,
        )
        shared = host.gateway.shared
        # One count of failed logins for every worker and replica when they share Redis.
        self.throttle = LoginThrottle(clock) if shared is None else SharedLoginThrottle(shared)
        self.events = EventLog(event_sink(settings, url))
        self._mirror = LogMirror(self.events, skip=_OUTCOME_LINES)
        self._scrubbing: Config | None = None  # the config whose secrets `events.redact` knows

    async def open(self) -> None:
        if self.enabled:
            await self.auth.open()
            await self.keys.open()
        await self.events.open()
        logging.getLogger("nerve").addHandler(self._mirror)
        self.attach()

    async def close(self) -> None:
        logging.getLogger("nerve").removeHandler(self._mirror)
        await self.events.close()
        if self.enabled:
            await self.keys.close()
            await self.auth.close()

    def attach(self) -> None:
        """Subscribe to the current gateway's outcomes and scrub the current config's secrets.

        Idempotent and cheap: called after every reload the panel makes and on each dashboard
        and logs read, so a reload by the file watcher (new keys) is picked up too.
        """
        observers = getattr(self.host.gateway.gateway, "observers", None)
        if observers is not None and self.events.on_outcome not in observers:
            observers.append(self.events.on_outcome)
        if self.host.config is not self._scrubbing:
            self._scrubbing = self.host.config
            pattern = redactor(self.secret_values())
            self.events.redact = (lambda text: pattern.sub("***", text)) if pattern else None

    def secret_values(self) -> list[str]:
        config = self.host.config
        values = [p.api_key or "" for p in config.providers] + [
            k.key for k in config.server.api_keys
        ]
        values += [v for p in config.providers for v in p.headers.values()]
        return values

    def scrub(self, text: str) -> str:
        """Free text (an error message) without any configured secret in it."""
        pattern = redactor(self.secret_values())
        return pattern.sub("***", text) if pattern else text

    def client(self, scope: Mapping[str, Any]) -> str:
        client = scope.get("client")
        return str(client[0]) if client else "unknown"


def event_sink(settings: AdminConfig, storage_url: str) -> EventSink | None:
    """Where the event log goes: `admin.event_log` when set ("" for nowhere), else the store's
    shared log (the PostgreSQL table, or events.jsonl beside the SQLite file)."""
    if settings.event_log is not None:
        return JsonlFile(Path(settings.event_log)) if settings.event_log else None
    where = parse_store_url(storage_url, what="event log")
    if not isinstance(where, SQLiteURL):
        return EventTable(where.dsn, schema=where.schema)
    beside = Path(settings.state_dir) if isinstance(where.path, str) else where.path.parent
    return JsonlFile(beside / "events.jsonl")  # ":memory:": the state directory
