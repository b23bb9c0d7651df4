"""SF-1 layer 1 for PowerShell and cmd: case-insensitive, encoded commands decoded."""

from __future__ import annotations

import base64

import pytest

from nerve.safety import check_rules


def blocked(command: str) -> bool:
    return not check_rules("shell", command).allowed


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("Remove-Item -Recurse -Force C:\\", True),
        ("remove-item C:\\Windows\\System32 -recurse", True),
        ("Remove-Item -Path $env:USERPROFILE -Recurse -Force", True),
        ("Remove-Item .\\bin -Recurse -WhatIf", False),
        ("Format-Volume -DriveLetter D", True),
        ("Stop-Computer -Force", True),
        ('powershell -Command "Remove-Item -Recurse -Force C:\\Users\\bob"', True),
        ("del /s /q C:\\", True),
        ("rd /s /q C:\\Users\\bob", True),
        ("format C: /q", True),
        ("vssadmin delete shadows /all /quiet", True),
        ("Get-ChildItem C:\\Users", False),
        ("echo format C:", False),
    ],
)
def test_powershell_and_cmd_are_judged_case_insensitively(command: str, expected: bool) -> None:
    """SF-1: Remove-Item -Recurse, del /s /q, rd /s, format, Format-Volume, Stop-Computer."""
    assert blocked(command) is expected


def test_an_encoded_powershell_command_is_decoded_and_judged() -> None:
    """SF-1: -EncodedCommand is base64 of UTF-16LE text."""
    payload = base64.b64encode("Remove-Item -Recurse -Force C:\\".encode("utf-16-le")).decode()
    assert blocked(f"powershell -NoProfile -EncodedCommand {payload}")
