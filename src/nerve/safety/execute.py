"""SF-5: run a shell command safely — checked, confined, time-boxed and size-capped.

Order: validate the timeout → confine the working directory (symlinks and `..` resolved, must
land inside an allowed path) → safety check (a blocked command never starts) → run in its own
process group → on timeout kill the whole group, so nothing it started lives on.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import signal
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from nerve.safety.engine import SafetyEngine
from nerve.safety.scope import Scope
from nerve.safety.verdict import Verdict

__all__ = ["MAX_TIMEOUT", "MIN_TIMEOUT", "SafeShell", "ShellResult"]

MIN_TIMEOUT = 1.0
MAX_TIMEOUT = 120.0
_READ_CHUNK = 65_536
_DRAIN_AFTER_KILL = 2.0  # seconds to collect the last output once the group is killed


@dataclass(frozen=True, slots=True)
class ShellResult:
    command: str
    allowed: bool
    verdict: Verdict
    exit_code: int | None  # None when the command did not run or was killed on timeout
    stdout: str
    stderr: str
    timed_out: bool
    truncated: bool  # stdout or stderr was cut at max_output characters
    duration_s: float


class _Capped:
    """Keeps the first `limit` characters of a stream and drains the rest."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.chunks: list[bytes] = []
        self.kept = 0
        self.dropped = False

    async def pump(self, stream: asyncio.StreamReader) -> None:
        byte_budget = self.limit * 4 + 4  # UTF-8: at most 4 bytes a character
        while chunk := await stream.read(_READ_CHUNK):
            room = byte_budget - self.kept
            if room > 0:
                self.chunks.append(chunk[:room])
                self.kept += min(room, len(chunk))
            if len(chunk) > room:
                self.dropped = True

    def text(self) -> tuple[str, bool]:
        text = b"".join(self.chunks).decode("utf-8", "replace")
        if len(text) > self.limit:
            return text[: self.limit], True
        return text, self.dropped


class SafeShell:
    """Run commands that pass the safety engine, only inside `allowed_paths`."""

    def __init__(
        self,
        *,
        allowed_paths: Sequence[str | Path],
        engine: SafetyEngine | None = None,
        max_output: int = 10_000,
    ) -> None:
        self.allowed = [Path(p).expanduser().resolve() for p in allowed_paths]
        self.engine = engine or SafetyEngine()
        self.max_output = max_output

    def _confine(self, cwd: str | Path | None) -> tuple[Path | None, str]:
        if cwd is None:
            if not self.allowed:
                return None, "no allowed paths are configured"
            cwd = self.allowed[0]
        try:
            real = Path(cwd).expanduser().resolve(strict=True)
        except (OSError, RuntimeError, ValueError) as exc:
            return None, f"working directory {str(cwd)!r} does not exist ({type(exc).__name__})"
        if not real.is_dir():
            return None, f"working directory {str(cwd)!r} is not a directory"
        if not any(real.is_relative_to(root) for root in self.allowed):
            return None, f"working directory {str(cwd)!r} is not inside the allowed paths"
        return real, ""

    async def run(
        self, command: str, *, cwd: str | Path | None = None, timeout_seconds: float = 30
    ) -> ShellResult:
        """Check, then run. Raises ValueError only for a timeout outside 1..120 seconds."""
        if not MIN_TIMEOUT <= timeout_seconds <= MAX_TIMEOUT or math.isnan(timeout_seconds):
            raise ValueError(
                f"timeout_seconds must be between {MIN_TIMEOUT:g} and {MAX_TIMEOUT:g}, "
                f"got {timeout_seconds!r}"
            )
        started = time.perf_counter()
        workdir, problem = self._confine(cwd)
        if workdir is None:
            verdict = Verdict(False, "high", problem, "rule")
            return self._refused(command, verdict, started)
        if "\x00" in command:
            verdict = Verdict(False, "high", "the command contains a NUL byte", "rule")
            return self._refused(command, verdict, started)
        roots = [str(root) for root in self.allowed]
        verdict = await self.engine.check("shell", command, scope=Scope.of(str(workdir), roots))
        if not verdict.allowed:
            return self._refused(command, verdict, started)
        return await self._execute(command, workdir, timeout_seconds, verdict, started)

    def _refused(self, command: str, verdict: Verdict, started: float) -> ShellResult:
        return ShellResult(
            command, False, verdict, None, "", "", False, False, time.perf_counter() - started
        )

    async def _execute(
        self, command: str, cwd: Path, limit_s: float, verdict: Verdict, started: float
    ) -> ShellResult:
        proc = await asyncio.create_subprocess_shell(
            command,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,  # its own process group, killed as one on timeout
        )
        out, err = _Capped(self.max_output), _Capped(self.max_output)
        assert proc.stdout is not None and proc.stderr is not None  # PIPE was requested
        pumps = asyncio.gather(out.pump(proc.stdout), err.pump(proc.stderr), proc.wait())
        timed_out = False
        try:
            await asyncio.wait_for(asyncio.shield(pumps), limit_s)
        except TimeoutError:
            timed_out = True
            _kill_group(proc.pid)
            try:
                await asyncio.wait_for(pumps, _DRAIN_AFTER_KILL)
            except TimeoutError:  # a process escaped the group and holds the pipe open
                pumps.cancel()
        finally:
            if proc.returncode is None:
                _kill_group(proc.pid)
                await proc.wait()
        stdout, cut_out = out.text()
        stderr, cut_err = err.text()
        return ShellResult(
            command=command,
            allowed=True,
            verdict=verdict,
            exit_code=None if timed_out else proc.returncode,
            stdout=stdout,
            stderr=stderr,
            timed_out=timed_out,
            truncated=cut_out or cut_err,
            duration_s=time.perf_counter() - started,
        )


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # already gone
        os.killpg(pid, signal.SIGKILL)
