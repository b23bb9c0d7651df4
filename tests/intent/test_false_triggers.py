"""Non-commands get no intent; destructive intents need strong evidence (SPEC RT-2, SF-2, IN-2).

The texts are written for these tests, not taken from any data set. Each group is a class of
false trigger: a deletion whose object no one deletes, a destructive action named in a statement,
a quoted order, questions that only talk, verbs used as nouns, after a modal or denied. Next to
each group stand the commands of the same shape that must still be read.
"""

from __future__ import annotations

import pytest

from nerve.intent import classify_rules
from nerve.safety.risk import INTENT_RISK

NOT_TRIGGERS = ("chat", "unknown")


def read(text: str, lang: str = "en") -> tuple[str, dict[str, object]]:
    result = classify_rules(text, languages=() if lang == "en" else (lang, "en"))
    return result.intent, result.parameters


def destructive(text: str, lang: str = "en") -> bool:
    intent, parameters = read(text, lang)
    risks = {INTENT_RISK.get(intent), INTENT_RISK.get(str(parameters.get("action")))}
    return bool(risks & {"high", "critical"})


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("en", "Please remove the banhammer. Many thanks."),
        ("en", "drop me off at the station"),
        ("hi", "garibi hatao desh bachao"),
        ("hi", 'Indira Gandhi ne "garibi hatao" ka nara diya'),
        ("hi", "iske baad beej nikaal den aur inhe dho len"),  # a recipe: take the seeds out
        ("hi", "ise hatane ke liye, sabse pehle use saaf karen"),  # a cleaning instruction
        ("hi", "angrezon ko desh se nikaalo, unhone kaha"),
    ],
)
def test_a_destructive_verb_without_a_deletable_object_is_no_deletion(lang: str, text: str) -> None:
    """RT-2: a deletion needs an object that can be deleted: a slogan against poverty, a recipe
    or a ban lifted is none."""
    assert not destructive(text, lang), read(text, lang)


@pytest.mark.parametrize(
    ("lang", "text", "target"),
    [
        ("en", "please remove all of my old invoices", "old invoices"),
        ("en", "Cancel my 2 p.m. alarm for today", None),
        ("hi", "purane logs hata do", "purane logs"),
        ("hi", "is email ko mita do", "email"),
        ("hi", "mere dog ke appointment ka reminder se chutkara paayen", None),
        ("hi", "saarey alarms delete kardo jo bhi maine set kiye hai", "alarms"),
        ("hi", "alarm cancel kare kyoki mene sone ka decide kiya he", None),
        ("hi", "sab kuch mita do", None),  # pointing at everything: still an order
        ("ta", "indha file ah delete pannu", "file"),
    ],
)
def test_a_deletion_of_a_deletable_thing_is_still_delete_data(
    lang: str, text: str, target: str | None
) -> None:
    """IN-2: the object gate keeps commands on data, reminders, files and what points at them."""
    intent, parameters = read(text, lang)
    assert intent == "delete_data", (intent, parameters)
    if target:
        assert parameters["target"] == target


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("hi", "Reboot ek 2013 ki film hai"),
        ("hi", "rm -rf ek khatarnak command hai"),
        ("hi", "database drop karna galat hai"),
        ("hi", "server ko band kar dena chahiye"),
        ("hi", "sarkar ne system band karna shuru kiya"),
        ("hi", "Halt station par gaadi rukti hai"),
        ("en", "the flood will wipe out everything"),
        ("en", "I drop the test database every night"),
        ("en", 'he typed "rm -rf /" by mistake once'),
        ("en", 'Mike said "delete all the data" and left'),
        ("en", "we must not destroy the environment"),
    ],
)
def test_a_destructive_action_named_in_a_statement_is_no_order(lang: str, text: str) -> None:
    """SF-2: a film title, a judgement, a story, a quote or a prediction names the action but
    orders none; only a command carries the critical `action` hint."""
    assert not destructive(text, lang), read(text, lang)


@pytest.mark.parametrize(
    ("lang", "text", "action"),
    [
        ("en", "please drop the test database", "drop_database"),
        ("en", "I want to drop the staging database now", "drop_database"),
        ("hi", "kya aap server band kar sakte hain?", "system_shutdown"),
        ("hi", "staging database ko drop karo", "drop_database"),
        ("en", "run rm -rf ./build on the box", "delete_files"),
    ],
)
def test_a_destructive_order_keeps_its_action(lang: str, text: str, action: str) -> None:
    """SF-2: commands, requests and wishes for a destructive action are still heard."""
    assert read(text, lang) == ("delete_data", read(text, lang)[1])
    assert read(text, lang)[1]["action"] == action


@pytest.mark.parametrize(
    "text",
    [
        "Hello?",
        "hi, anyone there?",
        "really?",
        "oh yeah??",
        "What is it?",
        "is that why?",
        "whats that?",
        "by the duck pond?",
        "or just a best friend?",
        "this month?",
        "Genius, right?",
        "what would you do with a million dollars?",
        "if you could live anywhere, where would you go?",
        "would you ever go skydiving?",
        "will you be a freshman this fall?",
        "When I moved to Pune I hated the rain",
        "it's crazy how many people showed up",
        "Have a good night",
        "should be fun",
        "What the heck, that was fast",
        "how embarrassing",
        "who knows",
    ],
)
def test_a_question_that_only_talks_gets_no_intent(text: str) -> None:
    """RT-2: echoes, follow-ups pointing back, fragments, tag questions, musings, subordinate
    and embedded wh-clauses, farewells and exclamations ask for no data."""
    assert read(text)[0] in NOT_TRIGGERS, read(text)


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("is it going to rain tomorrow?", "query_data"),
        ("will it snow this weekend", "query_data"),
        ("how many meetings do I have today?", "query_data"),
        ("what's the weather like in Pune?", "query_data"),
        ("alarm time remaining?", "query_data"),
        ("would you send the report to Priya?", "send_message"),
        ("can you find the cheapest flight to Goa?", "query_data"),
        ("mom ko no text kare", "send_message"),  # "no" is the message, not a negation
    ],
)
def test_a_data_question_or_request_of_the_same_shape_still_asks(text: str, intent: str) -> None:
    """IN-2: weather's dummy "it", how-many questions and requests to act keep their intent."""
    languages = ("hi", "en") if " ko " in text else ()
    assert classify_rules(text, languages=languages).intent == intent


@pytest.mark.parametrize(
    "text",
    [
        "don't get carried away now",
        "I didn't see that coming",
        "that would get old really fast",
        "long time to see",
        "oops that was text speak",
        "the show was a waste of time",
    ],
)
def test_a_verb_denied_after_a_modal_or_used_as_a_noun_is_no_command(text: str) -> None:
    """RT-2: a negated verb, a verb after a modal or "to", and a verb after a determiner or a
    copula (a noun) order nothing."""
    assert read(text)[0] in NOT_TRIGGERS, read(text)
