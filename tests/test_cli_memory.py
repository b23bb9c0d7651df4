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
    assert json.loads(run("recall", "--user", "asha", "--kind", "event").output)["records"] == []
    by_kind = json.loads(run("recall", "--user", "asha", "--kind", "memory").output)["records"]
    assert [r["id"] for r in by_kind] == [record_id]
    bad_kind = run("recall", "--user", "asha", "--kind", "note")
    assert bad_kind.exit_code == 2 and "'memory', 'event', 'fact'" in bad_kind.output
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


def test_export_then_import_moves_memory_and_its_fact_history_to_another_store(tmp_path):
    """The move from one store to another, through a file: the new store exports the same
    lines, byte for byte (same records, same histories, in the same order)."""
    a, b = config_file(tmp_path, "a"), config_file(tmp_path, "b")
    run("store", "--user", "asha", "--intent", "preference", "--importance", "0.8",
        "--data", '{"text": "likes masala dosa"}', "--config", a)  # fmt: skip
    for value in ("Chennai", "Madurai"):
        assert run("facts", "--user", "asha", "--entity", "Alice", "--attribute", "city",
                   "--value", value, "--config", a).exit_code == 0  # fmt: skip
    exported = run("export", "--output", "a.jsonl", "--json", "--config", a)
    assert exported.exit_code == 0, exported.output
    assert json.loads(exported.stdout) | {"seconds": 0} == {
        "exported": 4, "records": 2, "fact_changes": 2, "lines": 4, "seconds": 0}  # fmt: skip
    imported = run("import", "a.jsonl", "--json", "--config", b)
    assert imported.exit_code == 0, imported.output
    summary = json.loads(imported.stdout)
    assert (summary["imported"], summary["records"], summary["fact_changes"]) == (4, 2, 2)
    assert (summary["skipped_bad"], summary["lines"], summary["errors"]) == (0, 4, [])
    assert run("export", "--config", b).stdout_bytes == (tmp_path / "a.jsonl").read_bytes()
    again = json.loads(run("import", "a.jsonl", "--json", "--config", b).stdout)
    assert (again["imported"], again["unchanged"]) == (0, 4)
    recalled = run("recall", "--user", "asha", "--query", "dosa", "--config", b)
    assert json.loads(recalled.output)["records"][0]["data"] == {"text": "likes masala dosa"}
    recalled_since = json.loads(run("import", "a.jsonl", "--json", "--config", b).stdout)
    assert (recalled_since["unchanged"], recalled_since["kept_newer"]) == (3, 1)


def test_export_of_one_user_to_stdout(tmp_path):
    a = config_file(tmp_path, "a")
    for user in ("asha", "bala"):
        run("store", "--user", user, "--intent", "note", "--importance", "0.8",
            "--data", '{"text": "hello"}', "--config", a)  # fmt: skip
    result = run("export", "--user", "bala", "--config", a)
    assert result.exit_code == 0
    assert [json.loads(x)["user_id"] for x in result.stdout.splitlines()] == ["bala"]
    assert "exported 1 records and 0 fact changes" in result.stderr


def test_import_reports_each_bad_line_by_number_and_imports_the_good_ones(tmp_path):
    good = [record_line(i) for i in range(30)]
    lines = good[:2] + ['{"id": "x"}', "not json", *good[2:]] + ['{"kind": "memo"}'] * 22
    (tmp_path / "m.jsonl").write_text("\n".join(lines) + "\n")
    result = run("import", "m.jsonl", "--config", config_file(tmp_path, "a"))
    assert result.exit_code == 1
    errors = result.stderr.splitlines()
    assert errors[0] == "nerve: line 3: missing 'user_id'"
    assert errors[1].startswith("nerve: line 4: not JSON")
    assert errors[2].startswith("nerve: line 33: 'kind' must be one of memory, event, fact")
    assert len(errors) == 21 and errors[-1] == (
        "nerve: 24 bad lines (the first 20 above); the other lines were imported"
    )
    assert "imported 30 records and 0 fact changes from 54 lines" in result.stdout
    exported = run("export", "--config", config_file(tmp_path, "a")).stdout.splitlines()
    assert sorted(exported) == sorted(good)


def test_import_strict_imports_nothing_when_a_line_is_bad(tmp_path):
    a = config_file(tmp_path, "a")
    text = record_line(1) + "\n" + '{"id": 1}\n' + record_line(2) + "\n"
    result = CliRunner().invoke(cli, ["memory", "import", "-", "--strict", "--json",
                                      "--config", a], input=text)  # fmt: skip
    assert result.exit_code == 1
    assert "nerve: line 2: missing 'user_id'" in result.stderr
    assert "nothing was imported (--strict)" in result.stderr
    assert json.loads(result.stdout)["imported"] == 0
    assert run("export", "--config", a).stdout == ""
    ok = CliRunner().invoke(cli, ["memory", "import", "-", "--strict", "--config", a],
                            input=text.replace('{"id": 1}\n', ""))  # fmt: skip
    assert ok.exit_code == 0 and "imported 2 records" in ok.stdout


def test_export_and_import_usage_errors_exit_2_and_help_explains_the_format(tmp_path):
    assert run("import", "missing.jsonl").exit_code == 2
    assert run("import").exit_code == 2
    assert run("export", "--nope").exit_code == 2
    export_help, import_help = (
        " ".join(run(command, "--help").output.split()) for command in ("export", "import")
    )
    assert "fact_change" in export_help and "--user" in export_help and "--output" in export_help
    for words in ("line N: why", "--strict", "a later updated_at", "--overwrite", "- for stdin",
                  "nerve memory export --config old.yaml | nerve memory import"):  # fmt: skip
        assert words in import_help
    assert "export" in run("--help").output or "export" in run("memory").output


def test_a_failed_export_leaves_no_output_file(tmp_path):
    """--output is put in place only once complete: an unreachable store leaves nothing."""
    bad = tmp_path / "bad.yaml"
    bad.write_text('storage: {url: "postgresql://nobody@127.0.0.1:1/none"}\n')
    result = run("export", "--output", "out.jsonl", "--config", str(bad))
    assert result.exit_code == 1 and result.stderr.startswith("nerve: ")
    assert not (tmp_path / "out.jsonl").exists() and not (tmp_path / "out.jsonl.partial").exists()


def config_file(tmp_path, name: str) -> str:
    path = tmp_path / f"{name}.yaml"
    path.write_text(f'storage: {{url: "sqlite:///{tmp_path / name}.db"}}\n')
    return str(path)


def record_line(n: int) -> str:
    return json.dumps({
        "id": f"rec-{n:04d}", "user_id": "asha", "tier": "episodic", "kind": "memory",
        "intent": "note", "language": None, "session_id": None, "data": {"text": f"note {n}"},
        "importance": 0.5, "created_at": 1.8e9 + n, "updated_at": 1.8e9 + n,
        "accessed_at": None, "access_count": 0,
    }, separators=(",", ":"))  # fmt: skip
