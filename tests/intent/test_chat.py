"""Chit-chat is `chat`, never a command, and never a destructive one (SPEC RT-2, IN-2).

The chit-chat below is a small tune set written for these tests (not taken from any data set),
in English and romanized hi Hindi, bn Bengali, ta Tamil, te Telugu, kn Kannada, ml Malayalam,
with the slang people write. The real commands next to them check that the chat gate, decided
before the seven intents, does not swallow requests.
"""

from __future__ import annotations

import pytest

from nerve.intent import INTENTS, classify_rules
from nerve.safety.risk import intent_risk

CHIT_CHAT = [
    ("en", "Ravi anna luv u so muchhhh"),
    ("en", "thank you so much, you're the best!"),
    ("en", "good morning everyone"),
    ("en", "lol that was hilarious 😂😂"),
    ("en", "Hey Mel! Good to see you! How have you been?"),
    ("en", "Wow, that's amazing! What happened next?"),
    ("en", "I deleted my account yesterday lol"),
    ("en", "congrats on the new job!!"),
    ("en", "😍🔥🔥"),
    ("en", "what's up bro"),
    ("hi", "bossuuuu kya baat hai!"),
    ("hi", "bhai tu toh mast hai yaar"),
    ("hi", "aap kaise ho?"),
    ("hi", "shukriya bhai, bahut accha laga"),
    ("ta", "semma mass thalaiva"),
    ("ta", "super anna, vera level"),
    ("ta", "nandri machan"),
    ("te", "keka anna, adurs"),
    ("te", "chala bagundi babu"),
    ("kn", "sakkat guru, tumba chennagide"),
    ("kn", "namaskara, hegiddira?"),
    ("ml", "pwoli mone"),
    ("ml", "adipoli chetta, kidu"),
    ("bn", "darun dada!"),
    ("bn", "dhonnobad bondhu, khub bhalo"),
]


def read(lang: str, text: str) -> str:
    return classify_rules(text, languages=() if lang == "en" else (lang, "en")).intent


@pytest.mark.parametrize(("lang", "text"), CHIT_CHAT, ids=[t for _, t in CHIT_CHAT])
def test_chit_chat_is_chat(lang: str, text: str) -> None:
    """RT-2: greetings, praise, thanks, reactions, emoji and stories are conversation."""
    assert read(lang, text) == "chat"


@pytest.mark.parametrize(("lang", "text"), CHIT_CHAT, ids=[t for _, t in CHIT_CHAT])
def test_chit_chat_is_low_risk_for_safety(lang: str, text: str) -> None:
    """RT-2 with SF-2: chat is low risk, so safety never blocks small talk."""
    assert intent_risk(read(lang, text)) == "low"


def test_chat_is_a_declared_intent_with_no_parameters() -> None:
    """IN-2: `chat` is listed with the others; it names nothing to act on."""
    result = classify_rules("Ravi anna luv u so muchhhh")
    assert "chat" in INTENTS
    assert result.to_dict() == {
        "intent": "chat",
        "parameters": {},
        "confidence": 0.9,
        "source": "rules",
    }


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("en", "Ravi anna luv u so muchhhh"),  # "muchhhh" is no Bengali "muchhe" (wipe)
        ("hi", "Faulkner ne is padya ko hata diya"),  # narrates a removal
        ("hi", "sharir ki sari thakan mitane lagi"),
        ("kn", "gate tegedu olage hogi, mane beega tegeyalu"),  # a gerund in a list
        ("en", "Took a short trip to Rome to clear my mind!"),
        ("en", "The sky was so clear and filled with stars"),
        ("en", "leg drop"),
        ("en", "We roast marshmallows, tell stories and drop by the lake"),
    ],
)
def test_a_statement_with_a_destructive_word_is_not_a_deletion(lang: str, text: str) -> None:
    """RT-2: a destructive intent needs a command, not a word in a story."""
    assert read(lang, text) != "delete_data"


@pytest.mark.parametrize("text", ["delete", "delete karo", "please delete", "hata do"])
def test_a_deletion_that_names_nothing_is_a_low_confidence_guess(text: str) -> None:
    """RT-2: delete what? Without an object the rules answer delete_data below IN-1's 0.5 floor
    and without a target, so a caller asks which; safety still treats it as high risk."""
    result = classify_rules(text, languages=("hi", "en"))
    assert result.intent == "delete_data"
    assert result.confidence < 0.5
    assert "target" not in result.parameters


@pytest.mark.parametrize(
    ("lang", "text", "intent"),
    [
        ("en", "thanks! now send the report to Priya", "send_message"),
        ("en", "hey, delete the users table", "delete_data"),
        ("en", "Hi, what's the weather in Delhi tomorrow?", "query_data"),
        ("en", "I don't need alarms for today, just delete them please", "delete_data"),
        ("en", "can you tell me my account balance?", "query_data"),
        ("hi", "bhai purane logs hata do", "delete_data"),
        ("hi", "Mujhe mere all alarms dikhao for the next two weeks", "query_data"),
        ("hi", "kya kal barish hone wali hai", "query_data"),
        ("hi", "kya aap Priya ko message bhej sakte hain", "send_message"),
        ("ta", "anna indha file ah delete pannu", "delete_data"),
        ("te", "Rahul ki message pampu ra", "send_message"),
        ("kn", "guru ee file alisi", "delete_data"),
        ("ml", "chetta last week orders kaanikku", "query_data"),
        ("bn", "dada oi file muchhe dao", "delete_data"),
    ],
)
def test_a_command_wrapped_in_friendly_words_is_still_a_command(
    lang: str, text: str, intent: str
) -> None:
    """IN-2: greetings, thanks and address do not hide the request that follows them."""
    assert read(lang, text) == intent


def test_a_long_turn_full_of_chat_markers_is_chat_but_a_named_action_is_still_heard() -> None:
    """RT-2: a friend's long message that happens to hold "find" or "show" talks; a named
    destructive action (drop_database) is never talked away, whatever surrounds it."""
    story = (
        "Thanks so much, Gina! You seriously rock! Dancing is my way to relax and find my happy"
        " place, and I love sharing it with all of you, haha"
    )
    assert classify_rules(story).intent == "chat"
    wrapped = (
        "Thanks so much, Gina! You seriously rock! haha ok now please drop the production"
        " database before the demo tonight, thanks"
    )
    result = classify_rules(wrapped)
    assert (result.intent, result.parameters.get("action")) == ("delete_data", "drop_database")
