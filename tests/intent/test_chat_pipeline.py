"""Chit-chat through process(text, user_id): understood as chat, allowed, never blocked (SPEC
RT-2 with PR-1, SF-2). The texts are written for this test."""

from __future__ import annotations

import pytest

from nerve.intent import IntentClassifier
from nerve.pipeline import Pipeline
from nerve.safety import SafetyEngine

SMALL_TALK = [
    "Ravi anna luv u so muchhhh",
    "bossuuuu semma mass 🔥",
    "pwoli mone, adipoli!",
    "I deleted my account yesterday lol",
]


def pipeline(*, strict: bool) -> Pipeline:
    return Pipeline(intents=IntentClassifier(), safety=SafetyEngine(strict=strict))


@pytest.mark.parametrize("strict", [False, True], ids=["default", "strict"])
@pytest.mark.parametrize("text", SMALL_TALK)
async def test_small_talk_is_chat_and_allowed_by_safety(text: str, strict: bool) -> None:
    """RT-2: chat is low risk, so even strict safety lets it through; nothing destructive runs."""
    result = await pipeline(strict=strict).process(text, "u1")
    assert result.intent.intent == "chat"
    assert result.safety.allowed, result.safety
    assert result.safety.risk_level == "low"
    assert result.execution is not None and result.execution["status"] != "blocked"


async def test_a_real_deletion_next_to_small_talk_is_still_judged_high_risk() -> None:
    """SF-2: the gate does not launder commands: "thanks! delete the users table" is high."""
    result = await pipeline(strict=False).process("thanks! now delete the users table", "u1")
    assert result.intent.intent == "delete_data"
    assert result.safety.risk_level in ("high", "critical")
    assert not result.safety.allowed
