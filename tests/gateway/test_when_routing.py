"""Routes chosen by language and task: `when: {languages: [...]}`, `when: {task: ...}` (SPEC GW-5,
TP-3). The real detector (nerve.language) decides; nothing of nerve's is mocked."""

from __future__ import annotations

from typing import Any

import pytest

from nerve.config import RouteConfig, Target, When
from nerve.gateway.router import Router

MODEL = Target(provider="p", model="m")
DEFAULT = RouteConfig(name="default", model=MODEL)
INDIC = ("hi", "ta", "te", "kn", "ml", "bn")
# The same everyday sentence per language ("I will come to the office tomorrow", roughly).
ROMANIZED = {
    "hi": "mujhe kal subah tak report bhejna hai",
    "ta": "naan inniki office ku late ah varuven",
    "te": "nenu repu office ki vastanu",
    "kn": "naanu naale office ge baruttene",
    "ml": "njan naale officil varum",
    "bn": "ami kal office e jabo",
}
NATIVE = {
    "hi": "मुझे कल सुबह तक रिपोर्ट भेजनी है",
    "ta": "நான் இன்று அலுவலகத்துக்கு தாமதமாக வருவேன்",
    "te": "నేను రేపు ఆఫీసుకు వస్తాను",
    "kn": "ನಾನು ನಾಳೆ ಕಚೇರಿಗೆ ಬರುತ್ತೇನೆ",
    "ml": "ഞാൻ നാളെ ഓഫീസിൽ വരും",
    "bn": "আমি কাল অফিসে যাব",
}
ENGLISH = [
    "what is the capital of France",
    "please summarise this meeting for me",
    "can you book a table for two at 8 pm",
    "write a haiku about rivers",
]


def route(name: str, **when: Any) -> RouteConfig:
    return RouteConfig(name=name, when=When(**when), model=MODEL)


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def decide(router: Router, *texts: str) -> tuple[str, str]:
    chat: list[dict[str, Any]] = []
    for text in texts:
        chat += [user(text), {"role": "assistant", "content": "sure"}]
    decision = router.decide(chat[:-1])
    return decision.route, decision.layer


@pytest.fixture(scope="module")
def by_language() -> Router:
    return Router([*(route(lang, languages=[lang]) for lang in INDIC), DEFAULT])


@pytest.mark.parametrize("lang", INDIC)
def test_a_romanized_message_goes_to_its_languages_route(by_language, lang):
    assert decide(by_language, ROMANIZED[lang]) == (lang, "language")


@pytest.mark.parametrize("lang", INDIC)
def test_a_native_script_message_goes_to_its_languages_route(by_language, lang):
    assert decide(by_language, NATIVE[lang]) == (lang, "language")


@pytest.mark.parametrize("text", ENGLISH)
def test_english_stays_off_the_language_routes(by_language, text):
    assert decide(by_language, text) == ("default", "default")


def test_code_switched_text_counts_for_the_indic_language_it_mixes_in(by_language):
    """Hinglish with English nouns and word order still carries Hindi."""
    assert decide(by_language, "Please Liz ke liye video message banaye") == ("hi", "language")
    assert decide(by_language, "Alarm create karo at 4 pm and 9 pm on tuesday")[0] == "hi"


def test_the_language_with_the_larger_share_wins_over_config_order():
    router = Router([route("english", languages=["en"]), route("hindi", languages=["hi"]),
                     DEFAULT])  # fmt: skip
    assert decide(router, "mujhe kal ki meeting ka summary bhejo")[0] == "hindi"
    assert decide(router, "please send me the summary of the meeting")[0] == "english"


def test_a_route_may_list_several_languages():
    router = Router([route("south", languages=["ta", "te", "kn", "ml"]), DEFAULT])
    assert {decide(router, ROMANIZED[lang])[0] for lang in ("ta", "te", "kn", "ml")} == {"south"}
    assert decide(router, ROMANIZED["hi"])[0] == "default"


def test_a_bare_follow_up_keeps_the_conversations_language(by_language):
    """GW-4: 'continue' carries no language of its own; the earlier message decides."""
    assert decide(by_language, ROMANIZED["ta"], "continue") == ("ta", "context")


def test_code_in_a_message_is_not_read_as_a_language(by_language):
    """Commands and identifiers look like romanized words; the ask around them decides."""
    command = "top -bn1 | grep zombie | awk '{print $4\" \"$6}'"
    assert decide(by_language, command) == ("default", "default")
    tamil_ask = "indha code la enna bug irukku?\n```\nfor i in range(10): print(i)\n```"
    assert decide(by_language, tamil_ask) == ("ta", "language")


def test_rules_come_before_language():
    code = RouteConfig(name="code", rules=[r"\bpython\b"], model=MODEL)
    router = Router([code, route("ta", languages=["ta"]), DEFAULT])
    assert decide(router, "enakku oru python function ezhuthi kudu") == ("code", "rules")
    assert decide(router, ROMANIZED["ta"]) == ("ta", "language")


def test_language_and_task_together_must_both_hold():
    router = Router([route("ta-code", languages=["ta"], task="code"),
                     route("ta", languages=["ta"]), DEFAULT])  # fmt: skip
    assert decide(router, "enakku oru python function ezhuthi kudu") == ("ta-code", "language")
    assert decide(router, ROMANIZED["ta"]) == ("ta", "language")


def test_language_comes_before_semantic_examples():
    writing = RouteConfig(name="writing", examples=["naan inniki office ku varuven"], model=MODEL)
    router = Router([writing, route("ta", languages=["ta"]), DEFAULT])
    assert decide(router, ROMANIZED["ta"]) == ("ta", "language")


@pytest.fixture(scope="module")
def by_task() -> Router:
    return Router([route("coder", task="code"), route("thinker", task="reasoning"),
                   route("polyglot", task="multilingual"), DEFAULT])  # fmt: skip


@pytest.mark.parametrize(
    "text",
    [
        "write a python function that reverses a list",
        "fix the bug in my script, it crashes on startup",
        "def load(path):\n    return json.load(open(path))\n\nwhy is this slow?",
        "Traceback (most recent call last):\n  File \"app.py\", line 3\nKeyError: 'id'",
        "what does find . -name '*.log' -mtime +7 do",
        "```\nconst x = await fetch(url);\n```",
        "SELECT name, count(*) FROM users GROUP BY name",
    ],
)
def test_code_goes_to_the_code_task(by_task, text):
    assert decide(by_task, text) == ("coder", "task")


@pytest.mark.parametrize(
    "text",
    [
        "think this through step by step: which offer should I take",
        "prove that the square root of 2 is irrational",
        "solve for x: 3x + 5 = 20",
        "what are the pros and cons of renting versus buying",
        "should we migrate to microservices or keep the monolith",
        "how many ways can 5 people sit around a round table",
    ],
)
def test_reasoning_goes_to_the_reasoning_task(by_task, text):
    assert decide(by_task, text) == ("thinker", "task")


@pytest.mark.parametrize(
    "text", [ROMANIZED["hi"], NATIVE["ta"], "你好，今天天气怎么样", "Привет, как дела?"]
)
def test_anything_not_english_goes_to_the_multilingual_task(by_task, text):
    assert decide(by_task, text) == ("polyglot", "task")


@pytest.mark.parametrize(
    "text",
    [*ENGLISH, "I love coding", "select the items from the list you like", "what is 2024 like"],
)
def test_plain_english_requests_match_no_task(by_task, text):
    assert decide(by_task, text) == ("default", "default")


def test_the_decision_says_what_was_detected(by_language, by_task):
    decision = by_language.decide([user(ROMANIZED["ta"])])
    assert decision.detail.startswith("ta detected (ta, en;") and 0 < decision.score <= 1
    assert "python" in by_task.decide([user("write a python function")]).detail


def test_without_when_nothing_is_read():
    """No `when`, no rules, no examples: the detector is never asked (like before TP-3)."""
    router = Router([RouteConfig(name="other", model=MODEL), DEFAULT])
    assert router.nothing_to_match and not router.when.active
    assert decide(router, ROMANIZED["ta"]) == ("default", "default")
