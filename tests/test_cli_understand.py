"""`nerve language detect`, `nerve safety check` and `nerve process` (same stdin conventions)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from nerve.cli import cli


def run(args, stdin=None):
    return CliRunner().invoke(cli, args, input=stdin)


def test_language_detect_one_text():
    result = run(["language", "detect", "enna pannanum sollu"])
    assert result.exit_code == 0
    assert json.loads(result.output)["languages"][0] == "ta"


def test_language_detect_reads_stdin_one_item_per_line_in_order():
    result = run(["language", "detect"], "hello there\nmujhe file bhejo\n")
    lines = [json.loads(line) for line in result.output.splitlines()]
    assert [line["original_text"] for line in lines] == ["hello there", "mujhe file bhejo"]


def test_jsonl_input_keeps_newlines_and_reports_bad_lines_in_place():
    stdin = '{"text": "line one\\nline two"}\nnot json\n{"text": "ok"}\n'
    result = run(["language", "detect", "--jsonl"], stdin)
    lines = [json.loads(line) for line in result.output.splitlines()]
    assert lines[0]["original_text"] == "line one\nline two"
    assert "line 2" in lines[1]["error"]
    assert lines[2]["original_text"] == "ok"
    assert result.exit_code == 1


def test_safety_check_exits_1_when_blocked():
    blocked = run(["safety", "check", "--kind", "shell", "sudo rm -rf /"])
    assert blocked.exit_code == 1 and json.loads(blocked.output)["allowed"] is False
    allowed = run(["safety", "check", "--kind", "shell", "ls -la"])
    assert allowed.exit_code == 0 and json.loads(allowed.output)["allowed"] is True


def test_safety_check_batch_from_stdin():
    result = run(["safety", "check", "--kind", "sql"], "SELECT 1\nDROP TABLE users\n")
    verdicts = [json.loads(line) for line in result.output.splitlines()]
    assert [v["allowed"] for v in verdicts] == [True, False]
    assert result.exit_code == 0


def test_safety_check_judges_paths_against_cwd_and_roots():
    """SF-1: --cwd is the workspace unless --root names others; outside it is refused."""
    proj = "/home/dev/proj"  # judged, never touched: the paths need not exist
    inside = run(["safety", "check", "--kind", "shell", "--cwd", proj, "rm -rf build"])
    assert inside.exit_code == 0, inside.output
    outside = run(["safety", "check", "--kind", "shell", "--cwd", proj, "rm -rf ../other"])
    assert outside.exit_code == 1 and json.loads(outside.output)["category"] == "workspace"
    extra = ["--root", proj, "--root", "/home/dev/cache"]
    rooted = run(["safety", "check", "--kind", "shell", "--cwd", proj, *extra, "rm -rf ../cache/x"])
    assert rooted.exit_code == 0, rooted.output


def test_safety_check_read_only_refuses_writes_and_dialect_changes_comments():
    sql = ["safety", "check", "--kind", "sql"]
    assert run([*sql, "DELETE FROM t WHERE id = 1"]).exit_code == 0
    refused = run([*sql, "--read-only", "DELETE FROM t WHERE id = 1"])
    assert refused.exit_code == 1 and json.loads(refused.output)["category"] == "read_only"
    assert run([*sql, "--read-only", "SELECT * FROM t"]).exit_code == 0
    assert run([*sql, "--dialect", "postgres", "SELECT 1 --1;DROP TABLE t"]).exit_code == 0
    assert run([*sql, "--dialect", "mysql", "SELECT 1 --1;DROP TABLE t"]).exit_code == 1
    bad = run([*sql, "--dialect", "db2", "SELECT 1"])
    assert bad.exit_code == 2 and "db2" in bad.output


def test_the_cli_and_config_offer_the_dialects_the_engine_knows():
    from typing import get_args

    from nerve.cli.understand import SQL_DIALECTS
    from nerve.config_sections import GuardConfig
    from nerve.safety.scope import DIALECTS, MODES

    assert SQL_DIALECTS == DIALECTS
    fields = GuardConfig.model_fields
    assert get_args(fields["sql_dialect"].annotation) == DIALECTS
    assert get_args(fields["sql_mode"].annotation) == MODES


def test_safety_check_needs_a_kind():
    result = run(["safety", "check", "ls"])
    assert result.exit_code == 2 and "--kind" in result.output


def test_process_prints_the_result_and_exits_1_when_blocked(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run(["process", "--json", "--no-execute", "convert report.csv to pdf"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["intent"]["intent"] == "convert_format"
    result = run(["process", "drop the production database now"])
    assert result.exit_code == 1 and "BLOCKED" in result.output
