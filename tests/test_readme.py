"""The README's commands work as printed: every CLI line in its code blocks calls the
`.venv/bin/nerve` that `make run` installs, and names a command that exists."""

from __future__ import annotations

import re
from pathlib import Path

import click
from click.testing import CliRunner

from nerve.cli import cli

README = Path(__file__).resolve().parent.parent / "README.md"
_WORD = re.compile(r"^[a-z][a-z-]*$")


def shell_lines() -> list[str]:
    lines, fenced = [], False
    for line in README.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif fenced:
            lines.append(line.strip())
    return lines


def test_every_cli_line_calls_the_installed_nerve() -> None:
    bare = [line for line in shell_lines() if re.search(r"(?:^|[|;&]\s*)nerve ", line)]
    assert bare == [], "`nerve` is not on PATH after `make run`: write .venv/bin/nerve"


def test_every_command_the_readme_names_exists_and_has_help() -> None:
    calls = [line for line in shell_lines() if line.startswith(".venv/bin/nerve ")]
    assert len(calls) >= 10
    for line in calls:
        words = line.removeprefix(".venv/bin/nerve ").split()
        command: click.Command = cli
        path: list[str] = []
        for word in words:
            if not isinstance(command, click.Group) or not _WORD.match(word):
                break
            found = command.get_command(click.Context(command), word)
            assert found is not None, f"{line!r}: no command {' '.join([*path, word])!r}"
            command, path = found, [*path, word]
        shown = CliRunner().invoke(cli, [*path, "--help"])
        assert shown.exit_code == 0, (line, shown.output)
