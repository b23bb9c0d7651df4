"""`nerve memory export` and `nerve memory import`: memory as JSON lines (nerve.memory.transfer).

Both work on the configured store itself, beside any running nerve: the store serialises their
transactions with everyone else's, and a search cache in any process sees what an import wrote
(the writes raise the users' versions). With the SQLite WAL on and no server owning it, writes
a stopped server left in it are applied first, so the export holds them and none is replayed
over the import later; a running server applies its own. Progress goes to stderr, and only when
stderr is a terminal.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import click
import orjson

from nerve.cli.base import fail, load, open_store
from nerve.config import Config
from nerve.errors import NerveError
from nerve.memory import transfer

__all__ = ["export_command", "import_command"]

config_option = click.option("--config", "config_path", metavar="FILE", help="Config file.")
json_option = click.option("--json", "as_json", is_flag=True, help="Print a summary object.")


class Progress:
    """One line on a terminal's stderr, redrawn at most ten times a second; silent elsewhere."""

    def __init__(self, verb: str, source: IO[bytes] | None = None) -> None:
        self.stream = sys.stderr
        self.on = self.stream.isatty()
        self.verb, self.source = verb, source
        self.total = _size(source) if source is not None else None
        self.started, self.shown = time.monotonic(), 0.0  # the first call draws

    def __call__(self, lines: int) -> None:
        now = time.monotonic()
        if not self.on or now - self.shown < 0.1:
            return
        self.shown = now
        share = ""
        if self.total and self.source is not None:
            share = f"{min(self.source.tell() / self.total, 1.0):4.0%} "
        rate = lines / max(now - self.started, 1e-9)
        self.stream.write(f"\rnerve: {self.verb} {share}{lines:,} lines, {rate:,.0f}/s\x1b[K")
        self.stream.flush()

    def done(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def _size(source: IO[bytes]) -> int | None:
    with contextlib.suppress(OSError, ValueError, AttributeError):
        return os.fstat(source.fileno()).st_size or None
    return None


async def _open(config: Config) -> transfer.TransferStore:
    if config.memory.wal.enabled:  # apply what a stopped server left in the WAL (see above)
        from nerve.memory.build import build_memory

        memory = build_memory(config)
        await memory.open()
        await memory.close()
    store = transfer.open_store(config.storage.url)
    await open_store(store, config.storage.url)  # unreachable, refused: said, no traceback
    return store


def _file(path: str | Path, mode: str, name: object = None) -> IO[bytes]:
    """`path` opened (the caller closes it), or exit 1 naming `name` (else the path)."""
    try:
        return open(path, mode)
    except OSError as e:
        fail(f"cannot open {name or path}: {e.strerror or e}")


def _run(main: Any) -> Any:
    try:
        return asyncio.run(main)
    except BrokenPipeError:
        fail("the output was closed before the export finished")
    except (NerveError, ValueError) as e:
        fail(e.message if isinstance(e, NerveError) else str(e))
    except OSError as e:  # the store or a file: unreachable, disk full, no permission
        fail(f"{type(e).__name__}: {e}")


@click.command("export")
@click.option("--user", "user_id", help="Only this user's records and fact history.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path),
              help="Write FILE (put in place once complete) instead of stdout.")  # fmt: skip
@json_option
@config_option
def export_command(
    user_id: str | None, output: Path | None, as_json: bool, config_path: str | None
) -> None:
    """Write every record, then every fact change, as JSON lines.

    A record line is the record as the API returns it; a fact's value history follows in
    lines of kind "fact_change". The summary ({exported, records, fact_changes, lines,
    seconds}, with --json as an object) goes to stderr, or to stdout with --output.

    \b
        nerve memory export > memory.jsonl
        nerve memory export --user asha --output asha.jsonl
    """
    config = load(config_path)
    partial = output.with_name(output.name + ".partial") if output else None

    async def main(out: IO[bytes]) -> transfer.Exported:
        store = await _open(config)
        progress = Progress("exporting")
        try:
            return await transfer.export(store, out.write, user_id=user_id, progress=progress)
        finally:
            progress.done()
            await store.close()

    if partial is None:
        done = _run(main(sys.stdout.buffer))
        sys.stdout.buffer.flush()
    else:
        try:
            with _file(partial, "wb", output) as file:
                done = _run(main(file))
                file.flush()
                os.fsync(file.fileno())
            os.replace(partial, str(output))
        finally:
            partial.unlink(missing_ok=True)
    if as_json:
        click.echo(orjson.dumps(done.to_dict()), err=output is None)
    else:
        click.echo(f"nerve: exported {done.records:,} records and {done.fact_changes:,} fact "
                   f"changes in {done.seconds:.2f} s", err=True)  # fmt: skip


@click.command("import")
@click.argument("source", metavar="FILE", type=click.Path(exists=True, dir_okay=False,
                allow_dash=True))  # fmt: skip
@click.option("--strict", is_flag=True,
              help="Import nothing when any line is bad (the file is read twice).")  # fmt: skip
@click.option(
    "--overwrite",
    is_flag=True,
    help="The file wins even over a record the store holds with a newer updated_at.",
)
@click.option("--batch", type=click.IntRange(1, 100_000), default=transfer.BATCH,
              show_default=True, help="Records per transaction.")  # fmt: skip
@json_option
@config_option
def import_command(source: str, strict: bool, overwrite: bool, batch: int, as_json: bool,
                   config_path: str | None) -> None:  # fmt: skip
    """Import JSON lines as `nerve memory export` writes them (FILE, or - for stdin).

    Every line is validated; a bad one is reported as "line N: why" (the first 20, and how
    many in all), the good ones are imported, and the exit code is 1. With --strict nothing is
    imported when any line is bad. Idempotent by id: a record already held unchanged is not
    written again, a newer copy in the store (a later updated_at, or the same and a later
    accessed_at) is kept unless --overwrite, a fact change already in the history is not
    appended twice. Within the file the newer copy wins, then the later line. `text` is
    derived again, never read from the file. --json prints {imported, records, fact_changes,
    unchanged, kept_newer, duplicates, skipped_bad, lines, seconds, errors}. Moving from one
    store to another (SQLite to PostgreSQL):

    \b
        nerve memory export --config old.yaml | nerve memory import --config new.yaml -
    """
    config = load(config_path)
    with contextlib.ExitStack() as files:
        stdin = source == "-"
        stream = sys.stdin.buffer if stdin else files.enter_context(_file(source, "rb"))
        if strict:
            stream = _checked(stream, files, as_json)

        async def main() -> transfer.Imported:
            store = await _open(config)
            progress = Progress("importing", stream)
            try:
                return await transfer.import_lines(
                    store, stream, batch=batch, overwrite=overwrite, progress=progress
                )
            finally:
                progress.done()
                await store.close()

        done = _run(main())
    _report(done, as_json, "the other lines were imported")


def _checked(stream: IO[bytes], files: contextlib.ExitStack, as_json: bool) -> IO[bytes]:
    """--strict: validate every line first (exit 1 with the report when one is bad); the
    stream to import from, rewound (a pipe is copied to a temporary file to be read again)."""
    if stream.seekable():
        start = stream.tell()
        checked = transfer.check(stream)
        again = stream
    else:
        start, again = 0, files.enter_context(tempfile.TemporaryFile())  # noqa: SIM115 - closed by `files`
        checked = transfer.check(_copy(stream, again))
    if checked.bad:
        _report(checked, as_json, "nothing was imported (--strict)")
    again.seek(start)
    return again


def _copy(stream: IO[bytes], spool: IO[bytes]) -> Iterator[bytes]:
    for line in stream:
        spool.write(line)
        yield line


def _report(done: transfer.Imported, as_json: bool, outcome: str) -> None:
    for error in done.errors:
        click.echo(f"nerve: {error}", err=True)
    if done.bad:
        more = f" (the first {len(done.errors)} above)" if done.bad > len(done.errors) else ""
        click.echo(f"nerve: {done.bad:,} bad lines{more}; {outcome}", err=True)
    if as_json:
        click.echo(orjson.dumps(done.to_dict(), option=orjson.OPT_INDENT_2))
    else:
        click.echo(
            f"imported {done.records:,} records and {done.fact_changes:,} fact changes from "
            f"{done.lines:,} lines in {done.seconds:.2f} s ({done.unchanged:,} already there, "
            f"{done.kept_newer:,} kept as newer in the store, {done.bad:,} bad)"
        )
    if done.bad:
        sys.exit(1)
