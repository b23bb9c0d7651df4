"""`nerve memory ...` against the default SQLite store in a fresh directory."""

from __future__ import annotations

import json

from click.testing import CliRunner

from nerve.cli import cli


def run(*args):
    return CliRunner().invoke(cli, ["memory", *args])


def test_store_recall_and_forget_from_the_shell():
    stored = run(
        "store",
        "--user",
        "asha",
        "--intent",
        "preference",
        "--importance",
        "0.8",
        "--data",
        '{"text": "likes masala dosa"}',
    )
    assert stored.exit_code == 0, stored.output
    record_id = json.loads(stored.output)["id"]
    recalled = run("recall", "--user", "asha", "--query", "dosa")
    assert json.loads(recalled.output)["records"][0]["id"] == record_id
    forgotten = run("forget", "--id", record_id)
    assert json.loads(forgotten.output) == {"deleted": 1}


def test_a_memory_below_the_threshold_exits_1_and_says_why():
    result = run("store", "--user", "u", "--intent", "x", "--importance", "0.1", "--data", "{}")
    assert result.exit_code == 1 and "threshold" in result.output


def test_bad_json_and_bad_fields_are_clear_errors():
    result = run("store", "--user", "u", "--intent", "x", "--importance", "0.9", "--data", "{")
    assert result.exit_code == 1 and "--data is not valid JSON" in result.output
    result = run("events", "--user", "u", "--session", "s", "--type", "nope", "--payload", "{}")
    assert result.exit_code == 1 and "unknown event type" in result.output
    result = run("forget")
    assert result.exit_code == 2
