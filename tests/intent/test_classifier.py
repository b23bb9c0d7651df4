"""The LLM-first classifier and its fallback to the rules (SPEC IN-1).

The model is a fake `Complete`: a test double for the callable the pipeline injects (messages in,
the model's text out). It records what it was sent.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from nerve.errors import UpstreamTimeout
from nerve.intent import INTENTS, IntentClassifier

CSV_TO_JSON = {"input_format": "csv", "output_format": "json"}


class FakeModel:
    """Answers each call with the next scripted reply; an exception instance is raised."""

    def __init__(self, *replies: object) -> None:
        self.replies = list(replies)
        self.calls: list[list[dict[str, Any]]] = []

    async def __call__(self, messages: list[dict[str, Any]]) -> str:
        self.calls.append(messages)
        reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        return reply  # type: ignore[return-value]  # a non-str reply is part of some tests


def answer(intent: str = "convert_format", confidence: float = 0.93, **parameters: Any) -> str:
    return json.dumps({"intent": intent, "parameters": parameters, "confidence": confidence})


async def test_a_valid_model_answer_is_the_result_with_source_llm() -> None:
    """IN-1: LLM first; its structured answer is used as is."""
    model = FakeModel(answer("convert_format", 0.93, **CSV_TO_JSON))
    result = await IntentClassifier(llm=model).classify("convert this csv to json")
    assert result.to_dict() == {
        "intent": "convert_format",
        "parameters": CSV_TO_JSON,
        "confidence": 0.93,
        "source": "llm",
    }


async def test_the_model_is_sent_the_intents_the_schema_and_the_request_as_data() -> None:
    """IN-1: a structured-output prompt; the request travels as JSON, not as instructions."""
    model = FakeModel(answer("send_message", 0.9, recipient="Priya"))
    await IntentClassifier(llm=model).classify(
        "Priya ko message bhejo", normalized_text="Priya ko message send", languages=["hi", "en"]
    )
    [(system, user)] = model.calls
    assert system["role"] == "system" and user["role"] == "user"
    assert all(name in system["content"] for name in INTENTS)
    assert '"required":["intent","parameters","confidence"]' in system["content"]
    assert json.loads(user["content"]) == {
        "request": "Priya ko message bhejo",
        "normalized_text": "Priya ko message send",
        "languages": ["hi", "en"],
    }


@pytest.mark.parametrize(
    "reply",
    [
        "```json\n" + answer("summarize", 0.8, target="notes") + "\n```",
        "```\n" + answer("summarize", 0.8, target="notes") + "\n```",
        "Here is the intent:\n" + answer("summarize", 0.8, target="notes"),
    ],
    ids=["json fence", "bare fence", "prose before"],
)
async def test_a_fenced_or_wrapped_json_answer_is_accepted(reply: str) -> None:
    """IN-1: ```json fences around the answer are tolerated."""
    result = await IntentClassifier(llm=FakeModel(reply)).classify("summarize the notes")
    assert (result.intent, result.parameters, result.source) == (
        "summarize",
        {"target": "notes"},
        "llm",
    )


async def test_an_answer_below_the_confidence_floor_falls_back_to_the_rules() -> None:
    """IN-1: LLM results below 0.5 confidence fall back to rules."""
    model = FakeModel(answer("explain", 0.49))
    result = await IntentClassifier(llm=model).classify("convert this csv to json")
    assert (result.intent, result.parameters, result.source) == (
        "convert_format",
        CSV_TO_JSON,
        "rules",
    )


async def test_an_answer_exactly_at_the_floor_is_kept_and_the_floor_is_configurable() -> None:
    """IN-1: the floor is 0.5 by default (inclusive); `min_confidence` moves it."""
    at_floor = await IntentClassifier(llm=FakeModel(answer("explain", 0.5))).classify("hi")
    assert (at_floor.intent, at_floor.source) == ("explain", "llm")
    strict = IntentClassifier(llm=FakeModel(answer("explain", 0.8)), min_confidence=0.9)
    assert (await strict.classify("hi")).source == "rules"


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "not json at all",
        '{"intent": "summarize", "parameters": {}, "confidence": 0.9',
        "[1, 2, 3]",
        "```json\n{oops}\n```",
    ],
    ids=["empty", "prose", "truncated", "array", "fenced garbage"],
)
async def test_invalid_json_falls_back_to_the_rules(reply: str) -> None:
    """IN-1: invalid JSON falls back to rules."""
    result = await IntentClassifier(llm=FakeModel(reply)).classify("delete the users table")
    assert (result.intent, result.source) == ("delete_data", "rules")


@pytest.mark.parametrize(
    "reply",
    [
        {"intent": "summarize", "parameters": {}},
        {"intent": "summarize", "parameters": [], "confidence": 0.9},
        {"intent": "summarize", "parameters": {}, "confidence": "high"},
        {"intent": "summarize", "parameters": {}, "confidence": "0.9"},
        {"intent": "summarize", "parameters": {}, "confidence": True},
        {"intent": "summarize", "parameters": {}, "confidence": 1.5},
        {"intent": "summarize", "parameters": {}, "confidence": 0.9, "reasoning": "..."},
        {"intent": ["summarize"], "parameters": {}, "confidence": 0.9},
    ],
    ids=[
        "no confidence",
        "parameters a list",
        "confidence a word",
        "confidence a string",
        "confidence a bool",
        "confidence above 1",
        "extra key",
        "intent a list",
    ],
)
async def test_an_answer_that_breaks_the_schema_falls_back_to_the_rules(
    reply: dict[str, Any],
) -> None:
    """IN-1: a schema mismatch falls back to rules."""
    model = FakeModel(json.dumps(reply))
    result = await IntentClassifier(llm=model).classify("delete the users table")
    assert (result.intent, result.source) == ("delete_data", "rules")


@pytest.mark.parametrize("name", ["book_flight", "DELETE_DATA", "rule", ""])
async def test_an_intent_name_outside_the_list_falls_back_to_the_rules(name: str) -> None:
    """IN-1: the model may only answer one of INTENTS."""
    model = FakeModel(answer(name, 0.99))
    result = await IntentClassifier(llm=model).classify("send the report to Priya")
    assert (result.intent, result.parameters, result.source) == (
        "send_message",
        {"recipient": "Priya", "content": "report"},
        "rules",
    )


@pytest.mark.parametrize(
    "error",
    [RuntimeError("boom"), UpstreamTimeout(), ValueError("bad"), KeyError("x")],
    ids=lambda e: type(e).__name__,
)
async def test_a_model_that_raises_falls_back_to_the_rules(error: Exception) -> None:
    """IN-1: errors fall back to rules; classify never raises."""
    result = await IntentClassifier(llm=FakeModel(error)).classify("summarize this document")
    assert (result.intent, result.parameters, result.source) == (
        "summarize",
        {"target": "document"},
        "rules",
    )


async def test_a_model_that_answers_something_other_than_text_falls_back_to_the_rules() -> None:
    """IN-1: a broken `Complete` (None instead of text) is an error like any other."""
    result = await IntentClassifier(llm=FakeModel(None)).classify("explain recursion")
    assert (result.intent, result.source) == ("explain", "rules")


async def test_a_model_that_never_answers_times_out_and_falls_back_to_the_rules() -> None:
    """IN-1: a timeout falls back to rules, after `timeout` seconds, not the model's."""
    never = asyncio.Event()
    calls = 0

    async def hanging(messages: list[dict[str, Any]]) -> str:
        nonlocal calls
        calls += 1
        await never.wait()
        return answer()

    classifier = IntentClassifier(llm=hanging, timeout=0.05)
    result = await asyncio.wait_for(classifier.classify("convert this csv to json"), timeout=5)
    assert (result.intent, result.parameters, result.source) == (
        "convert_format",
        CSV_TO_JSON,
        "rules",
    )
    assert calls == 1


async def test_the_rules_read_the_text_as_written_with_its_languages_when_the_model_fails() -> None:
    """IN-1 with LG-3: the fallback reads the text itself with nerve.language's languages; the
    normalized text (an Indic helper turned into an English imperative) is the model's only."""
    classifier = IntentClassifier(llm=FakeModel(RuntimeError("down")))
    sent = await classifier.classify(
        "Priya ko message bhejo", normalized_text="Priya ko message send", languages=["hi"]
    )
    assert (sent.intent, sent.parameters, sent.source) == (
        "send_message",
        {"recipient": "Priya"},
        "rules",
    )
    helped = await classifier.classify(  # "tharu" helps "ayachu" ask; "give" after it does not
        "ammakku message ayachu tharu", normalized_text="ammakku message ayachu give",
        languages=["ml", "en"],
    )  # fmt: skip
    assert (helped.intent, helped.parameters.get("recipient")) == ("send_message", "amma")


async def test_the_rules_action_hint_overrides_the_model_on_a_destructive_request() -> None:
    """IN-1 with SF-2: what is dangerous is decided by code, not by the model."""
    model = FakeModel(answer("delete_data", 0.9, target="database", action="cleanup"))
    result = await IntentClassifier(llm=model).classify("drop the production database")
    assert result.source == "llm"
    assert result.parameters == {"target": "database", "action": "drop_database"}


async def test_format_names_from_the_model_are_normalized() -> None:
    """IN-1: "Excel" from the model becomes xlsx, as the rules would say."""
    model = FakeModel(answer("convert_format", 0.9, input_format="Excel", output_format="JSON"))
    result = await IntentClassifier(llm=model).classify("excel ko json mein badlo")
    assert result.parameters == {"input_format": "xlsx", "output_format": "json"}


def test_the_response_format_is_a_json_schema_for_intent_parameters_confidence() -> None:
    """IN-1: the caller can send an OpenAI `response_format` for structured output."""
    response_format = IntentClassifier().response_format()
    assert response_format["type"] == "json_schema"
    schema = response_format["json_schema"]["schema"]
    assert response_format["json_schema"]["name"] == "intent"
    assert schema["required"] == ["intent", "parameters", "confidence"]
    assert schema["properties"]["intent"]["enum"] == list(INTENTS)
    assert schema["properties"]["parameters"]["type"] == "object"
    assert schema["properties"]["confidence"] == {
        **schema["properties"]["confidence"],
        "type": "number",
        "minimum": 0.0,
        "maximum": 1.0,
    }
    json.dumps(response_format)  # serializable as it is
