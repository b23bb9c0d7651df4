"""The file sandbox: every path a tool touches resolves inside `assistant.files.allowed_paths`.

A path is resolved (symlinks followed, `..` collapsed; a relative path counts from the first
allowed root) before it is compared with the roots, so `../x`, an absolute path elsewhere and a
symlink pointing out are all refused with "path is not allowed". Writes open the final component
with O_NOFOLLOW, so a symlink swapped in after the check is not followed either.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from nerve.safety import Scope

__all__ = ["FileSandbox", "PathNotAllowed"]


class PathNotAllowed(ValueError):
    """The path resolves outside every allowed root."""


class FileSandbox:
    def __init__(
        self,
        allowed_paths: Sequence[str | Path],
        *,
        max_read_bytes: int = 200_000,
        max_write_bytes: int = 1_000_000,
        max_send_bytes: int = 8 * 1024 * 1024,
    ) -> None:
        self.roots = [Path(p).expanduser().resolve() for p in allowed_paths]
        self.max_read_bytes = max_read_bytes
        self.max_write_bytes = max_write_bytes
        self.max_send_bytes = max_send_bytes

    def _refuse(self, path: str | Path) -> PathNotAllowed:
        allowed = ", ".join(str(r) for r in self.roots) or "none configured"
        return PathNotAllowed(f"path is not allowed: {path} (allowed: {allowed})")

    def resolve(self, path: str | Path) -> Path:
        """The real path, or PathNotAllowed when it lies outside every allowed root."""
        if not self.roots or not str(path).strip() or "\x00" in str(path):
            raise self._refuse(path)
        given = Path(path).expanduser()
        try:
            real = (given if given.is_absolute() else self.roots[0] / given).resolve()
        except (OSError, RuntimeError) as exc:  # a symlink loop
            raise self._refuse(path) from exc
        if not any(real.is_relative_to(root) for root in self.roots):
            raise self._refuse(path)
        return real

    def workdir(self) -> Path:
        """The first allowed root, created if missing: where relative paths and shells start."""
        if not self.roots:
            raise self._refuse(".")
        self.roots[0].mkdir(parents=True, exist_ok=True)
        return self.roots[0]

    def scope(self) -> Scope:
        """The workspace safety judges commands against: shells start in the first root."""
        roots = [str(root) for root in self.roots]
        return Scope.of(roots[0] if roots else None, roots)

    def read_text(self, path: str | Path) -> tuple[str, bool]:
        """The file's text (undecodable bytes replaced) and whether it was cut at the cap."""
        real = self.resolve(path)
        if not real.is_file():
            raise FileNotFoundError(f"no such file: {path}")
        with open(real, "rb") as f:
            data = f.read(self.max_read_bytes + 1)
        cut = len(data) > self.max_read_bytes
        return data[: self.max_read_bytes].decode("utf-8", "replace"), cut

    def write_text(self, path: str | Path, content: str) -> tuple[Path, int]:
        """Write (create or replace) the file; returns its real path and the bytes written."""
        data = content.encode("utf-8")
        if len(data) > self.max_write_bytes:
            raise ValueError(
                f"content is {len(data):,} bytes; the limit is {self.max_write_bytes:,}"
            )
        self.workdir()
        real = self.resolve(path)
        real.parent.mkdir(parents=True, exist_ok=True)
        self.resolve(real.parent)  # created directories stay inside too
        fd = os.open(real, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        return real, len(data)

    def sendable(self, path: str | Path) -> tuple[Path, int]:
        """A regular file inside the sandbox, small enough to attach to a message."""
        real = self.resolve(path)
        if not real.is_file():
            raise FileNotFoundError(f"no such file: {path}")
        size = real.stat().st_size
        if size > self.max_send_bytes:
            raise ValueError(f"file is {size:,} bytes; the limit is {self.max_send_bytes:,}")
        return real, size
