"""Hot reload of the config (SPEC GW-18): what a new config changes, and watching the file.

A reload is validate → build → swap: the new config is parsed in full before anything changes,
so an invalid file is rejected with its reason while the old config keeps serving. Routes,
providers, prices, limits, probes, learning and the understanding pipeline apply at once;
sections that own sockets, files or stores (`server.host`, `storage`, `redis`, `memory`...)
are reported as needing a restart rather than half-applied; of the assistant's section, the MCP
server list reloads live.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

from nerve.config import Config
from nerve.config_sections import AssistantConfig
from nerve.errors import ConfigError

__all__ = ["ConfigWatcher", "changed_sections", "restart_required", "write_atomically"]

log = logging.getLogger("nerve.reload")

# Sections a running server owns resources for: a change takes a restart.
_RESTART = ("storage", "redis", "memory", "admin", "assistant", "agents", "telemetry")
_SERVER_RESTART = ("host", "port", "workers")


def changed_sections(old: Config, new: Config) -> list[str]:
    return [name for name in type(new).model_fields if getattr(old, name) != getattr(new, name)]


def restart_required(old: Config, new: Config) -> list[str]:
    """Keys whose new values take effect only after a restart."""
    out = [
        f"server.{k}" for k in _SERVER_RESTART if getattr(old.server, k) != getattr(new.server, k)
    ]
    out += [name for name in _RESTART if name in type(new).model_fields
            and _restart_part(getattr(old, name)) != _restart_part(getattr(new, name))]  # fmt: skip
    return out


def _restart_part(section: object) -> object:
    """What of a section needs a restart: the assistant's MCP server list reloads live."""
    if isinstance(section, AssistantConfig):
        return section.model_dump(exclude={"mcp_servers"})
    return section


def digest(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def write_atomically(path: Path, text: str) -> None:
    """Replace `path` with `text` so a reader (another replica's watcher) never sees half a file."""
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


class ConfigWatcher:
    """Polls the config file; when its content changes, calls `on_change(text)`.

    Polling the content (a config file is small: reading and hashing it costs microseconds)
    needs no inotify, misses no edit within one mtime tick, and works on every filesystem,
    including a ConfigMap volume that swaps a symlink.

    A file is read while an editor or `echo > nerve.yaml` rewrites it in place (truncate, then
    write), so a poll can find it empty or cut short: a change is applied only once the same
    content is read by two polls in a row (one interval later), and a file with no settings is
    rejected as "the config file is empty", never taken for the built-in defaults. A writer
    that pauses longer than an interval mid-file can still be caught: `write_atomically` (and
    the API's reload) never shows a half-written file.
    """

    def __init__(
        self,
        path: Path,
        on_change: Callable[[str], Awaitable[object]],
        *,
        interval: float,
    ) -> None:
        self.path = path
        self.on_change = on_change
        self.interval = interval
        self._digest: str | None = None  # of the content last applied (or rejected)
        self._settling: str | None = None  # of a new content, read once: applied if read again
        self.last_error: str | None = None
        self._poke = asyncio.Event()

    def seen(self, text: str) -> None:
        """The server applied `text` itself (API reload): do not apply it a second time."""
        self._digest = digest(text)
        self._settling = None
        self.last_error = None

    def prime(self) -> None:
        """Take the file as it is now as the one already applied (the server loaded it)."""
        with contextlib.suppress(OSError):
            self.seen(self.path.read_text(encoding="utf-8"))

    def poke(self) -> None:
        """Poll now rather than at the next interval."""
        self._poke.set()

    async def run(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):  # not wait_for: it can drop a cancel (3.11)
                async with asyncio.timeout(self.interval):
                    await self._poke.wait()
            self._poke.clear()
            try:
                await self.check()
            except Exception:  # a bug here must not stop watching
                log.exception("config watcher failed")

    async def check(self) -> bool:
        """One poll: apply the file if it changed and read the same as at the poll before.

        True when it was applied.
        """
        try:
            text = self.path.read_text(encoding="utf-8")
        except OSError as e:
            self._note_error(f"cannot read {self.path}: {e.strerror}")
            return False
        now = digest(text)
        if now == self._digest:
            self._settling = None  # back as it was: whatever was read in between is dropped
            return False
        if now != self._settling:
            self._settling = now  # new, or still changing: wait for it to hold still
            return False
        self._settling = None
        self._digest = now
        if _is_empty(text):
            self._note_error("the config file is empty")
            return False
        try:
            await self.on_change(text)
        except ConfigError as e:
            self._note_error(f"the changed config file was not applied: {e}")
            return False
        self.last_error = None
        return True

    def _note_error(self, message: str) -> None:
        if message != self.last_error:
            log.error("RELOAD %s; the previous config keeps serving", message)
        self.last_error = message


def _is_empty(text: str) -> bool:
    """No settings: blank, or YAML comments only (it would parse to the built-in defaults)."""
    return all(not line.strip() or line.lstrip().startswith("#") for line in text.splitlines())
