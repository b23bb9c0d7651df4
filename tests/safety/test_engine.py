"""SF-2/SF-3/SF-4: the three layers, strict mode and the judge at the edge."""

from __future__ import annotations

import asyncio

import pytest

from nerve.safety import INTENT_RISK, Kind, SafetyEngine, check_rules


class FakeJudge:
    """A test double for the injected LLM judge: records calls, answers as told."""

    def __init__(self, safe: bool = True, reason: str = "looks fine") -> None:
        self.safe = safe
        self.reason = reason
        self.calls: list[tuple[Kind, str]] = []

    async def __call__(self, kind: Kind, content: str) -> tuple[bool, str]:
        self.calls.append((kind, content))
        return self.safe, self.reason


async def never_answers(kind: Kind, content: str) -> tuple[bool, str]:
    await asyncio.Event().wait()  # waits until cancelled by the engine's timeout
    return True, "unreachable"


async def broken(kind: Kind, content: str) -> tuple[bool, str]:
    raise ConnectionError("gateway down")


def test_the_intent_table_is_the_seed_table() -> None:
    """SF-2: low, medium, high and critical intents as in the seed."""
    assert {k for k, v in INTENT_RISK.items() if v == "low"} == {
        "convert_format",
        "summarize",
        "generate_report",
        "query_data",
        "explain",
        "chat",  # conversation, not a command (issue 16)
    }
    assert {k for k, v in INTENT_RISK.items() if v == "medium"} == {"send_message", "unknown"}
    assert INTENT_RISK["delete_data"] == "high"
    assert INTENT_RISK["drop_database"] == INTENT_RISK["system_shutdown"] == "critical"


async def test_layer_one_blocks_before_the_judge_is_asked() -> None:
    """SF-3: the judge only runs after layers 1-2 pass."""
    judge = FakeJudge()
    verdict = await SafetyEngine(judge=judge).check("shell", "rm -rf /")
    assert verdict.blocked_by == "rule" and judge.calls == []


@pytest.mark.parametrize("intent", ["delete_data", "drop_database", "system_shutdown"])
async def test_high_and_critical_intents_always_block(intent: str) -> None:
    """SF-2: blocked_by 'risk', whatever the mode."""
    verdict = await SafetyEngine().check("text", "tidy up", intent=intent)
    assert not verdict.allowed and verdict.blocked_by == "risk"
    assert verdict.risk_level == INTENT_RISK[intent]


@pytest.mark.parametrize("intent", ["send_message", "unknown", "an_intent_nobody_knows"])
async def test_medium_intents_block_only_in_strict_mode(intent: str) -> None:
    """SF-2: strict mode also blocks medium; unknown intents count as medium."""
    relaxed = await SafetyEngine().check("text", "hello", intent=intent)
    strict = await SafetyEngine(strict=True).check("text", "hello", intent=intent)
    assert relaxed.allowed and relaxed.risk_level == "medium"
    assert not strict.allowed and strict.blocked_by == "risk"


async def test_low_intents_pass_both_modes() -> None:
    """SF-2: low-risk intents pass even in strict mode."""
    verdict = await SafetyEngine(strict=True).check("text", "summarize this", intent="summarize")
    assert verdict.allowed and verdict.risk_level == "low"


async def test_strict_mode_blocks_medium_rule_findings() -> None:
    """SF-2: a layer-1 medium (rm -rf in the workspace) is refused in strict mode."""
    assert (await SafetyEngine().check("shell", "rm -rf ./build")).allowed
    verdict = await SafetyEngine(strict=True).check("shell", "rm -rf ./build")
    assert not verdict.allowed and verdict.blocked_by == "rule"


async def test_the_judge_can_block_what_the_rules_allow() -> None:
    """SF-3: {safe: false, reason} becomes a verdict blocked by 'llm'."""
    judge = FakeJudge(safe=False, reason="this would email every customer")
    verdict = await SafetyEngine(judge=judge).check("text", "send the newsletter")
    assert not verdict.allowed and verdict.blocked_by == "llm"
    assert "every customer" in verdict.reason
    assert judge.calls == [("text", "send the newsletter")]


async def test_a_safe_judgement_allows_and_is_reported() -> None:
    """SF-3/SF-4: the judge's reason is part of the verdict."""
    verdict = await SafetyEngine(judge=FakeJudge()).check("shell", "ls -la")
    assert verdict.allowed and "looks fine" in verdict.reason


@pytest.mark.parametrize("judge", [never_answers, broken])
async def test_an_unavailable_judge_blocks_in_strict_mode(judge: object) -> None:
    """SF-3: timeout or error → strict mode blocks, blocked_by 'llm', reason says so."""
    engine = SafetyEngine(strict=True, judge=judge, judge_timeout=0.05)  # type: ignore[arg-type]
    verdict = await engine.check("shell", "ls")
    assert not verdict.allowed and verdict.blocked_by == "llm"
    assert "unavailable" in verdict.reason


@pytest.mark.parametrize("judge", [never_answers, broken])
async def test_an_unavailable_judge_is_skipped_outside_strict_mode(judge: object) -> None:
    """SF-3: timeout or error → allowed on the rules alone, and the reason says so."""
    engine = SafetyEngine(judge=judge, judge_timeout=0.05)  # type: ignore[arg-type]
    verdict = await engine.check("shell", "ls")
    assert verdict.allowed and "unavailable" in verdict.reason


async def test_a_judge_answering_garbage_counts_as_unavailable() -> None:
    """SF-3: anything but (bool, str) is a judge failure, not a pass."""

    async def garbage(kind: Kind, content: str) -> tuple[bool, str]:
        return "yes", "sure"  # type: ignore[return-value]

    verdict = await SafetyEngine(strict=True, judge=garbage).check("shell", "ls")
    assert not verdict.allowed and verdict.blocked_by == "llm"


def test_check_rules_is_layer_one_alone() -> None:
    """SF-1/SF-4: sync, returns a Verdict, blocked_by 'rule' or None."""
    assert check_rules("shell", "ls").blocked_by is None
    assert check_rules("action", "drop_database").blocked_by == "rule"
