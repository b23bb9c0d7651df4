"""SF-1 layer 1 for named actions and natural-language text."""

from __future__ import annotations

import pytest

from nerve.safety import check_rules


@pytest.mark.parametrize(
    ("action", "level"),
    [
        ("delete_all_data", "critical"),
        ("drop_database", "critical"),
        ("Drop-Database", "critical"),
        ("dropDatabase", "critical"),
        ("DROP DATABASE", "critical"),
        ("system_shutdown", "critical"),
        ("format_disk", "critical"),
        ("erase_all", "critical"),
        ("deleteAllData", "critical"),
        ("drop_table", "high"),
        ("destroy_cluster", "critical"),
        ("destroyEnvironment", "high"),
        ("truncate-logs", "high"),
    ],
)
def test_dangerous_action_names_are_blocked_whatever_their_spelling(
    action: str, level: str
) -> None:
    """SF-1: separators and case are normalized before the verb and scope are judged."""
    verdict = check_rules("action", action)
    assert not verdict.allowed and verdict.risk_level == level


@pytest.mark.parametrize(
    "action", ["convert_format", "summarize", "generate_report", "query_data", "dropdown_select"]
)
def test_ordinary_action_names_pass(action: str) -> None:
    """SF-1: `format` alone and words that merely start like a verb are fine."""
    assert check_rules("action", action).allowed


def test_an_action_that_only_loses_state_is_medium() -> None:
    """SF-2: allowed by default, blocked in strict mode."""
    verdict = check_rules("action", "reset_password")
    assert verdict.allowed and verdict.risk_level == "medium"


@pytest.mark.parametrize(
    "text",
    [
        "Please delete all data from the customers table",
        "drop the production database now",
        "Format the disk and start over",
        "shut down the server tonight",
        "wipe everything in the bucket",
        "Clean up with `rm -rf ~/` before you start",
        "Run this:\n```bash\nsudo rm -rf /etc\n```",
        "$ git push --force origin main",
        "then run DELETE FROM users; to reset",
    ],
)
def test_text_with_a_dangerous_request_or_embedded_command_is_blocked(text: str) -> None:
    """SF-1: phrases, code spans and command-looking lines are all judged."""
    assert not check_rules("text", text).allowed


@pytest.mark.parametrize(
    "text",
    [
        "Summarize the meeting notes",
        "Never delete the database without a backup",
        "Do not drop the table, just rename it",
        "Update the report with last week's numbers",
        "Use `ls -la` to list files",
        "How do I format a date in Python?",
        "Delete the draft",
    ],
)
def test_ordinary_or_negated_text_passes(text: str) -> None:
    """SF-1: negations and everyday requests are not dangerous."""
    assert check_rules("text", text).allowed
