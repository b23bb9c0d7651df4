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
