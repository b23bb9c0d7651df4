"""Hostile and degenerate input never makes intent raise (SPEC IN-2: "never raises, empty input
included")."""

from __future__ import annotations

import random

import pytest

from nerve.intent import INTENTS, IntentClassifier, classify_rules
from nerve.intent import rules as rules_module

UNKNOWN = {"intent": "unknown", "parameters": {}, "confidence": 0.0, "source": "rules"}


@pytest.mark.parametrize("text", ["", " ", "\n\t  \r\n", "\x00", "\x00" * 64, "?!.,;", "   ?  "])
def test_empty_blank_or_punctuation_only_input_is_unknown(text: str) -> None:
    """IN-2: empty input included."""
    assert classify_rules(text).to_dict() == UNKNOWN


def test_nul_and_control_characters_are_read_as_spaces() -> None:
    """IN-2: a NUL inside a request does not hide it."""
    result = classify_rules("delete\x00the\x07users\x1ftable\x7f")
    assert (result.intent, result.parameters) == ("delete_data", {"target": "users table"})


def test_a_megabyte_of_input_is_classified_from_its_opening() -> None:
    """IN-2: 1 MB of input returns; the intent is read from the first MAX_CHARS characters."""
    padding = "lorem ipsum dolor sit amet " * (1_000_000 // 27)
    assert classify_rules("send the report to Priya. " + padding).parameters["recipient"] == "Priya"
    assert classify_rules("x" * 1_000_000).to_dict() == UNKNOWN
    assert classify_rules(padding + "delete the users table").intent == "unknown"


def test_a_megabyte_of_one_cue_word_repeated_returns() -> None:
    """IN-2: the worst case for the matcher, a cue on every token, stays bounded; a deletion
    that names nothing to delete in a long text is no order (RT-2), one that names files is."""
    assert classify_rules("delete " * 150_000).intent == "unknown"
    assert classify_rules("delete files " * 75_000).intent == "delete_data"
    assert classify_rules("Priya ko " * 120_000).intent == "unknown"


def test_random_unicode_never_raises_and_always_answers_a_declared_intent() -> None:
    """IN-2: never raises, whatever the bytes (seeded, so a failure reproduces)."""
    rng = random.Random(20260401)
    alphabet = "abcdefghijklmnopqrstuvwxyz ABC?.,'-\"\n\t\x00→अआकखதமిలಕನമലবাং0123456789"
    words = ["delete", "send", "ko", "csv", "to", "json", "report", "what", "is", "bhejo", "ki"]
    for _ in range(500):
        chars = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80)))
        text = " ".join(rng.choice([chars, *words]) for _ in range(rng.randint(0, 12)))
        result = classify_rules(text, languages=rng.sample(["hi", "ta", "te", "bn", "en"], 2))
        assert result.intent in INTENTS
        assert 0.0 <= result.confidence <= 1.0


def test_a_bug_inside_the_rules_still_answers_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    """IN-2: never raises, even when a rule itself fails."""

    def broken(*_: object) -> None:
        raise IndexError("a rule bug")

    monkeypatch.setattr(rules_module, "_score", broken)
    assert classify_rules("delete the users table").to_dict() == UNKNOWN


async def test_the_classifier_without_a_model_answers_with_the_rules_for_any_input() -> None:
    """IN-1/IN-2: with no model configured the rules answer, and nothing raises."""
    classifier = IntentClassifier()
    for text in ["", "\x00\x00", "x" * 1_000_000, "convert this csv to json"]:
        result = await classifier.classify(text)
        assert result.source == "rules"
    assert result.parameters == {"input_format": "csv", "output_format": "json"}
