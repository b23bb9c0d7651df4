"""Formal and chat registers, stretched letters, short inputs, confidence (SPEC LG-1, LG-2)."""

from __future__ import annotations

import pytest

from nerve.language import detect


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("bharat ka itihas bahut purana hai aur isme kai rajvansh shamil hain", "hi"),
        ("ei nodi bangladesher prothom boro nodi ebong er dorghyo onek", "bn"),
        ("intha nagaram tamilnattin mukkiya thozhil maiyamaaga vilangukirathu", "ta"),
        ("ee nagaram andhra pradesh rashtramlo oka mukhyamaina vyaparakendram", "te"),
        ("ee nagaravu karnatakada pramukha vanijya kendragalalli ondagide", "kn"),
        ("ee nagaram keralathile pradhaana vyaapaara kendrangalil onnaanu", "ml"),
    ],
)
def test_formal_romanized_sentences_name_their_language_without_english(
    text: str, lang: str
) -> None:
    """LG-1, LG-2: Wikipedia-register sentences, long words and all, are one language."""
    result = detect(text)
    assert result.languages == [lang]
    assert not result.is_code_switched


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("padam pwoli aahn machane", "ml"),
        ("ikka ithu kidu aayi", "ml"),
        ("ee film chenag ide maga", "kn"),
        ("yen maarayya hengide", "kn"),
        ("tmi ki krso ajke", "bn"),
        ("eta kivbe hoise bhai", "bn"),
        ("semma padam da machan", "ta"),
        ("movie keka undi ra bava", "te"),
        ("yaar ye kya kr rha hai", "hi"),
    ],
)
def test_chat_spellings_and_slang_name_their_language(text: str, lang: str) -> None:
    """LG-1: pwoli, ikka, -aahn, chenag, maarayya, krso, kivbe, hoise, semma, keka."""
    assert detect(text).languages[:1] == [lang]


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("bossuuuu padam pwoliiii aahn", "ml"),
        ("semmaaaa padam daaa", "ta"),
        ("ekdum mastttt hai yaaaar", "hi"),
        ("chenaaaag ide maga", "kn"),
    ],
)
def test_stretched_letters_do_not_hide_the_language(text: str, lang: str) -> None:
    """LG-1: runs of three or more letters are read as two, or one."""
    assert detect(text).languages[:1] == [lang]


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("ebong", "bn"),
        ("itihas", "hi"),
        ("cheyyunnu", "ml"),
        ("maadidaru", "kn"),
        ("chesaru", "te"),
        ("irukkirathu", "ta"),
        ("prothom ebong", "bn"),
    ],
)
def test_short_inputs_are_decided_by_their_strongest_evidence(text: str, lang: str) -> None:
    """LG-1: one or two words attested in one language's spellings."""
    assert detect(text).languages[:1] == [lang]


def test_one_english_loanword_in_a_long_indic_sentence_is_not_a_switch() -> None:
    """LG-2: a single `film` among twelve Hindi words is a loanword; two English words in a
    short request are a switch."""
    long = detect("yah film saal 1995 mein bani thi aur iska nirdeshan unhone kiya tha aur")
    assert long.languages == ["hi"]
    assert detect("report banao aur manager ko bhejo").languages == ["hi", "en"]


def test_english_with_one_indic_word_or_a_name_stays_english_first() -> None:
    """LG-2: an English comment is English first, whatever single word it borrows."""
    assert detect("this song is pwoli, thanks for sharing it with everyone").languages[0] == "en"
    assert detect("Shared the report with Ramesh and Lakshmi yesterday").languages == ["en"]


def test_confidence_grows_with_evidence_and_stays_a_probability() -> None:
    """LG-2: a long clear sentence is surer than one word; nothing detected is 0.0."""
    long = detect("bharat ka itihas bahut purana hai aur isme kai rajvansh shamil hain")
    short = detect("itihas")
    assert 0.0 < short.confidence < long.confidence <= 0.99
    assert detect("1234").confidence == 0.0
