"""SF-1/SF-4: garbage in → a verdict out; nothing raises."""

from __future__ import annotations

import pytest

from nerve.safety import SafetyEngine, check_rules

KINDS = ["shell", "sql", "text", "action"]
NASTY = [
    "",
    "   \n\t ",
    "\x00",
    "rm\x00 -rf /",
    "\ud800\udfff lone surrogates \udc80",
    "'" * 1000,
    '"unterminated',
    "$(" * 500,
    "`" * 301,
    "((((((((((",
    "/*" * 200,
    "x" * 1_000_000,
    "rm -rf / " * 120_000,
    "\u202e\u2066\u200f",
    "🚀" * 5000,
    "<<EOF\n" * 200,
    "\\" * 999,
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("content", NASTY, ids=lambda c: repr(c[:12]))
def test_any_input_yields_a_verdict(kind: str, content: str) -> None:
    """SF-4: check_rules never raises, whatever it is given."""
    verdict = check_rules(kind, content)  # type: ignore[arg-type]
    assert verdict.risk_level in ("low", "medium", "high", "critical")


def test_an_oversized_command_is_refused_rather_than_analysed() -> None:
    """SF-1: megabytes of shell are not a command; judging them would be a denial of service."""
    verdict = check_rules("shell", "echo hi; " * 100_000)
    assert not verdict.allowed and "too long" in verdict.reason


def test_the_empty_string_is_harmless() -> None:
    """SF-4: empty input is allowed and low risk."""
    assert check_rules("shell", "").to_dict()["allowed"] is True


def test_a_nul_byte_cannot_split_a_command_name() -> None:
    """SF-1: NUL bytes are removed before judging."""
    assert not check_rules("shell", "r\x00m -rf /").allowed


@pytest.mark.parametrize("kind", ["nonsense", 42, None])
def test_an_unknown_kind_is_refused_not_raised(kind: object) -> None:
    """SF-4: a wrong kind is a blocking verdict with a clear reason."""
    verdict = check_rules(kind, "ls")  # type: ignore[arg-type]
    assert not verdict.allowed and "kind" in verdict.reason


async def test_the_engine_never_raises_on_non_string_content() -> None:
    """SF-4: the async chokepoint returns a verdict for anything."""
    verdict = await SafetyEngine().check("shell", b"rm -rf /")  # type: ignore[arg-type]
    assert not verdict.allowed
