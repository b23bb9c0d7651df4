"""SF-1 layer 1 on long scripts: split into top-level lines, first pass per line, early exit.

Speed must not change a verdict: a script is judged like its commands, the first pass never hides
a danger the rules would find, and judging stops only once the verdict is certain to block.
"""

from __future__ import annotations

import re

import pytest

from nerve.safety import check_rules, shell, triggers
from nerve.safety.segments import split

FILLER = [
    "cd /srv/app",
    "git status --short",
    "find . -name '*.pyc' -print | sort",
    'echo "build $(date +%F) on $(hostname)"',
    "grep -rn 'rm -rf' docs/ | wc -l",
    "kubectl get pods -n staging -o wide",
    "tar czf dist/app.tgz build/",
    "chmod 755 scripts/run.sh",
]


def script(*dangerous: str, repeat: int = 12) -> str:
    """A long (> 600 character) script of harmless lines with `dangerous` in the middle."""
    lines = FILLER * repeat
    middle = len(lines) // 2
    return "\n".join([*lines[:middle], *dangerous, *lines[middle:]])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a\nb\nc", ["a", "b", "c"]),
        ("echo 'x\ny'\nrm -rf /", ["echo 'x\ny'", "rm -rf /"]),
        ('echo "a $(echo "b\nc") d"\nls', ['echo "a $(echo "b\nc") d"', "ls"]),
        ("cat <<'EOF' | sh\nrm -rf /\nEOF\nls", ["cat <<'EOF' | sh\nrm -rf /\nEOF", "ls"]),
        ("ls \\\n  -la\npwd", ["ls \\\n  -la", "pwd"]),
        ("# don't\nls\n(\ncd /\n)", ["# don't", "ls", "(\ncd /\n)"]),
        ("x=$(\nls\n)\ny", ["x=$(\nls\n)", "y"]),
        ("echo `a\nb`\nc", ["echo `a\nb`", "c"]),
        ('echo "open\nls\nrm', ['echo "open\nls\nrm']),
        ("a <<< 'x'\nb", ["a <<< 'x'", "b"]),
        ("find . -exec rm {} \\;\nls", ["find . -exec rm {} \\;", "ls"]),
    ],
)
def test_a_script_splits_only_at_top_level_newlines(text: str, expected: list[str]) -> None:
    """Quotes, $( ), ( ), backticks, here-documents and continuations keep their lines."""
    assert split(text) == expected


@pytest.mark.parametrize(
    "dangerous",
    [
        ["rm -rf /etc"],
        ["git reset --hard origin/main"],
        ["bash <<'EOF'", "rm -rf ~", "EOF"],
        ['sh -c "', "rm -rf /usr", '"'],
        ["CMD='rm -rf /var/lib'", "eval $CMD"],
        ["T=/etc", "chmod -R 777 $T"],
        ["ssh db-1 'dropdb --if-exists shop'"],
    ],
)
def test_one_dangerous_line_blocks_a_long_script(dangerous: list[str]) -> None:
    text = script(*dangerous)
    assert len(text) > 600
    assert not check_rules("shell", text).allowed


@pytest.mark.parametrize(
    "harmless",
    [
        ["cat <<'EOF' > notes.md", "rm -rf /", "kubectl delete ns prod", "EOF"],
        ["echo 'rm -rf /", "and git reset --hard'"],
        ["git commit -m 'drop table users", "was a mistake'"],
        ["# rm -rf / is never run here"],
    ],
)
def test_data_spanning_lines_stays_data(harmless: list[str]) -> None:
    assert check_rules("shell", script(*harmless)).allowed


def test_windows_syntax_on_one_line_does_not_make_another_line_windows() -> None:
    """`\\;` ends a find -exec, it is not a drive root, even next to a `%date%` line."""
    text = script("echo %date% > stamp.txt", "find . -type d -exec sh -c 'cd {} && rm -i x' \\;")
    assert check_rules("shell", text).allowed


def test_judging_stops_at_the_first_blocking_command() -> None:
    """The verdict is the first high or critical finding, in order."""
    first = check_rules("shell", "git reset --hard; rm -rf /")
    assert not first.allowed and first.risk_level == "high" and "git reset" in first.reason
    long_first = check_rules("shell", script("git clean -fdx", "rm -rf /"))
    assert long_first.risk_level == "high" and "git clean" in long_first.reason


def test_medium_findings_do_not_stop_judging() -> None:
    verdict = check_rules("shell", "rm -rf ./build && rm -rf /")
    assert not verdict.allowed and verdict.risk_level == "critical"


def test_sql_stops_at_the_first_blocking_statement() -> None:
    verdict = check_rules("sql", "SELECT 1; DELETE FROM carts; DROP DATABASE shop;")
    assert not verdict.allowed and verdict.risk_level == "high" and "DELETE" in verdict.reason


COMMANDS = [
    "ls *.sh *.php *.rb",
    "find . -type d -name .git -prune -o -print",
    "mycli --prune old",
    "db.dropDatabase()",
    "client.cache.wipe()",
    "killall -u bob firefox",
    "mv notes.txt /dev/null",
    "cp -r ~ /mnt/usb",
    "chmod -R 777 ~",
    "dd if=/dev/zero of=/dev/sda",
    "tee /etc/hosts < hosts",
    "a=r; b=m; $a$b -rf /etc",
    "$'\\x72\\x6d' -rf /usr",
    "echo ok | ssh h 'rm -rf build'",
    "Remove-Item -Recurse -Force C:\\Users",
    "awk 'BEGIN { system(\"rm -rf /etc\") }'",
    "find / -name core -delete",
    "find . -exec chmod 777 {} \\;",
]


@pytest.mark.parametrize("command", COMMANDS)
def test_the_first_pass_never_changes_a_verdict(
    command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever the first pass skips, full judgement finds harmless too."""
    fast = check_rules("shell", command)
    monkeypatch.setattr(shell, "may_matter", lambda text, env: True)
    full = check_rules("shell", command)
    assert (fast.allowed, fast.risk_level) == (full.allowed, full.risk_level)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ls *.sh index.php", False),
        ("find . -name vendor -prune -o -print", False),
        ("chmod 644 notes.txt", False),
        ("chmod 644 /etc/hosts", True),
        ("tool --prune", True),
        ("echo $X", False),
        ("X=1; echo $X done", True),
    ],
)
def test_the_first_pass_skips_what_cannot_be_dangerous(text: str, expected: bool) -> None:
    assert triggers.may_matter(text, {}) is expected


def test_a_variable_assigned_earlier_is_followed_into_later_lines() -> None:
    assert triggers.may_matter("$TARGET /etc done", {"TARGET": "rm -rf"})
    assert not triggers.may_matter("$OTHER /etc done", {"TARGET": "rm -rf"})


@pytest.mark.parametrize(
    "command",
    ["ps -fp <pid>\nrm -rf /etc", "grep ERROR <logfile> | rm -rf /etc", "cat <in> ; rm -rf ~"],
)
def test_a_redirection_with_no_file_does_not_swallow_the_next_command(command: str) -> None:
    """`<placeholder>` leaves a dangling `>`: the next word starts a command, not a file name."""
    assert not check_rules("shell", command).allowed


def test_a_trie_pattern_matches_exactly_its_words() -> None:
    words = {"rm", "rmdir", "rsync", "r", "git", "gitlab-rake", "a.b"}
    pattern = re.compile(triggers.trie_pattern(words))
    assert all(pattern.fullmatch(word) for word in words)
    assert not any(pattern.fullmatch(word) for word in ("rmd", "gi", "gitlab", "aab", "rsyncx"))
