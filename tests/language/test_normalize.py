"""Keyword normalization, not translation (SPEC LG-3)."""

from __future__ import annotations

import pytest

from nerve.language import detect, normalize


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Hindi
        ("report banao sales ka", "report create sales ka"),
        ("file manager ko bhejo", "file manager ko send"),
        ("alarm set karo", "alarm set do"),
        ("yeh rapat दिखाओ", "this rapat show"),
        # Tamil
        ("file ah csv convert pannu", "file ah csv convert do"),
        ("meeting time ah maathru", "meeting time ah change"),
        ("report ah anuppu", "report ah send"),
        ("இந்த file அனுப்பு", "this file send"),
        # Telugu
        ("data chupinchu", "data show"),
        ("file ni pampu", "file ni send"),
        ("ee pani cheyyi", "ee pani do"),
        ("పాట ఆపు", "పాట stop"),
        # Kannada
        ("file na kalisi", "file na send"),
        ("report torisi", "report show"),
        ("ee kelsa maadi", "ee kelsa do"),
        ("ಫೈಲ್ ಕಳುಹಿಸಿ", "ಫೈಲ್ send"),
        # Malayalam
        ("file ayakku", "file send"),
        ("report kaanikku", "report show"),
        ("ithu cheyyu", "ithu do"),
        ("ഫയൽ മാറ്റൂ", "ഫയൽ change"),
        # Bengali
        ("file ta pathao", "file ta send"),
        ("report ta dekhao", "report ta show"),
        ("kaj ta koro", "kaj ta do"),
        ("ফাইলটা পাঠাও", "ফাইলটা send"),
    ],
)
def test_domain_verbs_of_every_language_become_english_keywords(text: str, expected: str) -> None:
    """LG-3: the common command verbs of all six Indic languages, romanized and native."""
    assert normalize(text) == expected


def test_everything_but_keywords_is_kept_character_for_character() -> None:
    """LG-3: spacing, punctuation, case of other words, digits and emoji survive."""
    text = "Anna,  indha FILE-ah  csv-ku   convert pannu!! 🙏 (by 5pm)\n"
    assert normalize(text) == "Anna,  this FILE-ah  csv-ku   convert do!! 🙏 (by 5pm)\n"


def test_text_without_keywords_is_returned_unchanged() -> None:
    """LG-3: no keyword, no change; English is never rewritten."""
    for text in ["mera naam Ravi hai", "please do it now", "", "  ", "मेरा नाम रवि है"]:
        assert normalize(text) == text


def test_keywords_keep_the_case_they_were_written_in() -> None:
    """LG-3: a capitalised or shouted keyword stays capitalised or shouted."""
    assert normalize("Bhejo abhi") == "Send abhi"
    assert normalize("BHEJO ABHI") == "SEND ABHI"


def test_stretched_keywords_are_still_recognised() -> None:
    """LG-3: chat spellings like `pannuuu` or `karooo` are the same words."""
    assert normalize("csv convert pannuuu") == "csv convert do"
    assert normalize("jaldi karooo") == "jaldi do"


def test_a_word_whose_meaning_depends_on_the_language_is_kept_unless_the_language_is_known() -> (
    None
):
    """LG-3: Bengali `din` is "give", Hindi `din` is "day": rewritten only for Bengali."""
    assert normalize("amake file ta din") == "amake file ta din"
    assert normalize("amake file ta din", ["bn"]) == "amake file ta give"
    assert normalize("ek din ruko", ["hi"]) == "ek din stop"


def test_only_the_given_languages_keywords_apply() -> None:
    """LG-3: a Tamil keyword is left alone when only Hindi is in play."""
    assert normalize("file anuppu", ["hi"]) == "file anuppu"
    assert normalize("file anuppu", ["ta"]) == "file send"
    assert normalize("file anuppu", []) == "file anuppu"
    assert normalize("file anuppu", ["xx"]) == "file anuppu"


def test_detect_normalizes_with_the_languages_it_found() -> None:
    """LG-2, LG-3: normalized_text in the record uses the detected languages."""
    assert detect("report banao sales ka").normalized_text == "report create sales ka"
    assert detect("amake file ta din").normalized_text == "amake file ta give"
