"""Questions and stories about people are chat; the lookups they resemble still ask (RT-2).

The texts are written for these tests (not taken from any data set): a question about what
someone did, said or felt ("usko kya hua?", "amma enna sonnanga?"), a question to the listener
in a second-person form ("tune aaj kya khaya?"), and a verb narrated after its subject ("I sent
him a message") are conversation; when, where and how-much questions and wished-for actions
("I need to record a video message for Sam") still reach an intent.
"""

from __future__ import annotations

import pytest

from nerve.intent import classify_rules

CHAT = [
    "usko kya hua?",
    "amma enna sonnanga?",
    "amma emannaru?",
    "amma enu helidru?",
    "amma enthu paranju?",
    "ma ki bollo?",
    "tune aaj kya khaya?",
    "tumne wo video dekha kya?",
    "saaptiya?",
    "kazhicho?",
    "ki korcho?",
    "how was the party?",
    "I sent him a message but he never replied",
    "usne mujhe kal raat message bheja tha",
    "avan enakku message anuppinan",
    "I messaged her yesterday, still no reply",
    "avan enikku message ayachu",
    "o amake message pathiyeche",
    "how did the interview go?",
    "bhai kal ka match dekha?",
    "kya kar rahe ho aaj kal?",
    "wo movie kaisi thi?",
    "mummy ne kya banaya aaj?",
    "kab milenge hum log?",
]

# Exclamations, opinions and rhetorical questions: said, not asked.
EXCLAIMED = [
    "what a day, finally home",
    "is it just me or is it really hot today",
    "this traffic is killing me",
    "honestly that show was a waste of time",
    "who even watches TV anymore",
    "why is Monday always so tedious",
    "kya bakwas movie thi yaar",
    "pata nahi kya hoga ab",
    "kitna time ho gaya milke",
    "kya mast khana tha kal",
    "kitna mazaa aaya kal",
    "who else is watching the game tonight",
    "remember that trip to goa?",
    "itna garam kyun hai aaj",
    "weekend pe kya plan hai?",
    "bagunnava?",
    "show was amazing last night",
]


@pytest.mark.parametrize("text", EXCLAIMED)
def test_an_exclamation_or_opinion_is_chat(text: str) -> None:
    assert classify_rules(text).intent == "chat"


@pytest.mark.parametrize("text", CHAT)
def test_a_question_or_story_about_people_is_not_a_command(text: str) -> None:
    assert classify_rules(text).intent in ("chat", "unknown")


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("Aaj subah sunrise kab hua tha", "query_data"),  # when: a lookup
        ("What did my cousin say in her message last week ?", "query_data"),
        ("I need to record a video message for Sam", "send_message"),
        ("I want to go see ice skating", "query_data"),
        ("how was the weather yesterday", "query_data"),
        ("Priya ko message bhejo", "send_message"),
        ("kya kal barish hogi", "query_data"),
        ("what is the traffic like downtown", "query_data"),
        ("ammakku message ayakku", "send_message"),
        ("why is my build failing", "explain"),
    ],
)
def test_the_lookups_and_requests_they_resemble_keep_their_intent(text: str, intent: str) -> None:
    assert classify_rules(text).intent == intent


def test_the_self_written_chat_tune_set_rarely_triggers_and_never_destructively() -> None:
    """bench/data/chat_tune.txt (self-written, tuned on): under 10% fire, none a deletion."""
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "bench" / "data" / "chat_tune.txt"
    lines = [t for t in path.read_text(encoding="utf-8").splitlines()[1:] if t.strip()]
    got = [classify_rules(t).intent for t in lines]
    fired = [g for g in got if g not in ("chat", "unknown")]
    assert len(fired) / len(lines) < 0.03
    assert "delete_data" not in got


@pytest.mark.parametrize(
    ("text", "action"),
    [
        ("server band karo", "system_shutdown"),
        ("server ko band kar dijiye", "system_shutdown"),
        ("server band kar sakte ho?", "system_shutdown"),
        ("sarkar ne system ko band kar diya tha", None),  # a story, not an order
        ("unhone computer band kar diya", None),
        ("system band kar rahe the", None),
    ],
)
def test_only_an_order_to_shut_a_machine_down_names_the_action(
    text: str, action: str | None
) -> None:
    assert classify_rules(text).parameters.get("action") == action


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("delete mat karo", "unknown"),
        ("please do not delete the logs", "unknown"),
        ("delete karne ka mann nahi kar raha photos", "unknown"),
        ("Mujhe ab chicken ki zaroorat nahi hai, wo reminder ko delete karo", "delete_data"),
        ("delete all my alarms", "delete_data"),
    ],
)
def test_a_deletion_denied_next_to_its_verb_is_no_deletion(text: str, intent: str) -> None:
    assert classify_rules(text, languages=("hi", "en")).intent == intent
